import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import searchFixture from '../src/sandbox/fixtures/identity/user-search.json';
import tokenFixture from '../src/sandbox/fixtures/identity/token.json';
import userGetFixture from '../src/sandbox/fixtures/identity/user-get.json';
import { identityPaths } from '../src/clients/identity/urls';
import { announce } from './child';

/*
 * The upstreams of the benchmarked paths, answering at once from canned bodies: the SMS gateway,
 * the identity provider (profile read, phone search, token) and the user collector. A bare
 * node:http server in its own process, so the service's process spends its CPU on the service
 * only, and this one spends as little as it can (no router, no body parser, replies prepared).
 * The replies are the recorded fixtures the client guards are tested on.
 */

export const BENCH_SMS_KEY = 'bench-sms-key';
export const BENCH_AID = 'benchaid';
export const BENCH_API_TOKEN = 'bench-api-token';
export const BENCH_COLLECTOR_TOKEN = 'bench-collector-token';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const PHONE_MARK = '__PHONE__';
// The search answers the searched phone's holder: the fixture user with the phone put in.
const [searchHead, searchTail] = JSON.stringify({
  ...searchFixture,
  users: [
    {
      ...searchFixture.users[0],
      custom_fields: searchFixture.users[0]!.custom_fields.map((f) =>
        f.field_name === 'otp_phone' ? { ...f, value: PHONE_MARK } : f,
      ),
    },
  ],
}).split(PHONE_MARK) as [string, string];

type Reply = (body: string) => { status: number; body: Buffer | string };
const replies = new Map<string, Reply>([
  ['/sms', () => ({ status: 200, body: json({ status: 'queued', id: 'bench' }) })],
  [`/idp${identityPaths.userGet}`, () => ({ status: 200, body: json(userGetFixture) })],
  [`/idp${identityPaths.token}`, () => ({ status: 200, body: json(tokenFixture) })],
  [
    `/idp${identityPaths.userSearch}`,
    (body) => ({ status: 200, body: `${searchHead}${searchedDigits(body)}${searchTail}` }),
  ],
  ['/collector/ingest/login', () => ({ status: 202, body: json({ accepted: true }) })],
  // A collector's traces endpoint (the tracing pair): an empty answer is an export fully accepted.
  ['/otlp/v1/traces', () => ({ status: 200, body: '' })],
]);
// Prepared once: the handlers above that ignore the request body answer the same bytes every time.
for (const [path, reply] of replies)
  if (reply.length === 0) {
    const fixed = reply('');
    replies.set(path, () => fixed);
  }

/** The phone digits of the search's `custom_fields` filter (form-urlencoded). */
function searchedDigits(form: string): string {
  const filter = new URLSearchParams(form).get('custom_fields') ?? '';
  return /"value":"(\d+)"/.exec(filter)?.[1] ?? '0';
}

function handle(req: IncomingMessage, res: ServerResponse) {
  const path = req.url?.split('?', 1)[0] ?? '';
  const reply = replies.get(path);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const answer = reply
      ? reply(Buffer.concat(chunks).toString('utf8'))
      : { status: 404, body: json({ error: 'not faked' }) };
    res.writeHead(answer.status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(answer.body),
    });
    res.end(answer.body);
  });
}

function startUpstreams(port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer({ keepAliveTimeout: 60_000 }, handle);
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({
        url,
        close: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
      });
    });
  });
}

if (require.main === module) {
  void startUpstreams().then(({ url }) => announce({ url }));
}
