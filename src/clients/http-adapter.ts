import axios, {
  AxiosError,
  AxiosHeaders,
  type AxiosAdapter,
  type AxiosResponse,
  type InternalAxiosRequestConfig,
} from 'axios';
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';

/*
 * axios's transport for the upstream client: the requests `createUpstream` makes, on
 * node:http, with the bytes axios's own http adapter writes (same headers, same order, same
 * values; test/clients/http-wire.test.ts reads them). axios's adapter pays per call for what
 * these requests never use (redirects, proxies, streams, progress, abort signals, data: URLs,
 * HTTP/2 checks, two timers): measured here at about a third of an upstream call's CPU
 * (CHANGELOG.md, 2026-11-25). A request outside that shape goes to axios's adapter, unchanged.
 *
 * node:http and not undici: undici writes `host` and `connection` first and in lower case,
 * which the upstreams would see; nock also intercepts node:http only, so the tests of every
 * client run this code.
 */

const USER_AGENT = `axios/${axios.VERSION}`;
/** What axios's adapter advertises on Node (brotli is always built in). */
const ACCEPT_ENCODING = 'gzip, compress, deflate, br';
const axiosHttp = axios.getAdapter('http');

/** The requests this adapter writes itself; anything else is axios's adapter's. */
function isPlain(config: InternalAxiosRequestConfig): boolean {
  return (
    config.proxy === false &&
    !config.signal &&
    !config.cancelToken &&
    !config.auth &&
    !config.baseURL &&
    !config.socketPath &&
    !config.params &&
    config.responseType === 'text' &&
    config.decompress !== false &&
    (config.data === undefined || typeof config.data === 'string') &&
    typeof config.url === 'string' &&
    (config.url.startsWith('http://') || config.url.startsWith('https://'))
  );
}

/** Headers as axios's adapter sends them: the request's, then the user agent, the length and the encodings, unless set. */
function outgoingHeaders(config: InternalAxiosRequestConfig, body: Buffer | undefined): Record<string, string> {
  const given = config.headers;
  const headers = given.toJSON(true) as Record<string, string>;
  if (!given.has('User-Agent')) headers['User-Agent'] = USER_AGENT;
  if (body && !given.has('Content-Length')) headers['Content-Length'] = String(body.length);
  if (!given.has('Accept-Encoding')) headers['Accept-Encoding'] = ACCEPT_ENCODING;
  return headers;
}

/** The reply body's stream once decoded, as axios's adapter decodes it. */
function decoded(res: http.IncomingMessage, method: string): NodeJS.ReadableStream {
  const encoding = res.headers['content-encoding'];
  if (!encoding) return res;
  if (method === 'HEAD' || res.statusCode === 204) {
    delete res.headers['content-encoding'];
    return res;
  }
  let decoder: zlib.Gunzip | zlib.Unzip | zlib.BrotliDecompress | undefined;
  switch (encoding.toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
    case 'compress':
    case 'x-compress':
    case 'deflate':
      decoder = zlib.createUnzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH });
      break;
    case 'br':
      decoder = zlib.createBrotliDecompress({
        flush: zlib.constants.BROTLI_OPERATION_FLUSH,
        finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
      });
      break;
    default:
      return res;
  }
  delete res.headers['content-encoding'];
  res.on('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

export const upstreamAdapter: AxiosAdapter = (config) => {
  if (!isPlain(config)) return axiosHttp(config);
  return new Promise<AxiosResponse>((resolve, reject) => {
    const url = config.url!;
    const method = (config.method ?? 'get').toUpperCase();
    const body = config.data === undefined ? undefined : Buffer.from(config.data as string, 'utf8');
    const secure = url.startsWith('https://');
    const transport = secure ? https : http;
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      clearTimeout(connectTimer);
      req.destroy();
      reject(err instanceof AxiosError ? err : AxiosError.from(err, undefined, config, req));
    };
    const timeout = config.timeout ?? 0;
    const onTimeout = () =>
      fail(new AxiosError(`timeout of ${timeout}ms exceeded`, AxiosError.ECONNABORTED, config, req));
    // Node's own request timeout starts once the socket is connected; this one covers the
    // connection and the wait for the reply's head, as axios's adapter's does.
    let connectTimer: NodeJS.Timeout | undefined;

    const req = transport.request(
      url,
      { method, headers: outgoingHeaders(config, body), agent: secure ? config.httpsAgent : config.httpAgent },
      (res) => {
        clearTimeout(connectTimer);
        const chunks: Buffer[] = [];
        const stream = decoded(res, method);
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', (err: Error) => fail(err));
        res.on('aborted', () =>
          fail(new AxiosError('stream has been aborted', AxiosError.ERR_BAD_RESPONSE, config, req)),
        );
        stream.on('end', () => {
          if (done) return;
          done = true;
          let data = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
          if (data.charCodeAt(0) === 0xfeff) data = data.slice(1);
          const response: AxiosResponse = {
            data,
            status: res.statusCode!,
            statusText: res.statusMessage ?? '',
            headers: new AxiosHeaders(res.headers as Record<string, string>),
            config,
            request: req,
          };
          const validate = config.validateStatus;
          if (!validate || validate(response.status)) resolve(response);
          else
            reject(
              new AxiosError(
                `Request failed with status code ${response.status}`,
                response.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST,
                config,
                req,
                response,
              ),
            );
        });
      },
    );
    req.on('error', fail);
    if (timeout > 0) {
      connectTimer = setTimeout(onTimeout, timeout);
      req.setTimeout(timeout, onTimeout);
    }
    req.end(body);
  });
};
