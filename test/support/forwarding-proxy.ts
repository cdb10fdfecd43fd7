import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exchange through the proxy: the request as it came, the answer as it went back. */
export interface ForwardedExchange {
  method: string;
  url: string;
  requestBody: string;
  status: number;
  headers: Headers;
  body: string;
}

const HOP_HEADERS = ['host', 'connection', 'content-length', 'transfer-encoding'];

/**
 * A proxy on a free port that forwards every request to `target` unchanged (redirects included)
 * and hands each exchange to `onExchange` before answering: a recorder or a watcher in front of
 * the service, or of a validating proxy in front of it.
 */
export async function forwardingProxy(
  target: string,
  onExchange: (exchange: ForwardedExchange) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const requestBody = Buffer.concat(chunks);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name, value]) => typeof value === 'string' && !HOP_HEADERS.includes(name)),
      ) as Record<string, string>;
      fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: requestBody.length > 0 ? requestBody : undefined,
        redirect: 'manual',
      })
        .then(async (answer) => {
          const body = await answer.text();
          onExchange({
            method: req.method!,
            url: req.url!,
            requestBody: requestBody.toString(),
            status: answer.status,
            headers: answer.headers,
            body,
          });
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
          res.end(body);
        })
        .catch((err: Error) => {
          res.writeHead(502);
          res.end(err.message);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
