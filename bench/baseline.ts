import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUpstream } from '../src/clients/http';
import { identityPaths } from '../src/clients/identity/urls';
import { createLogger } from '../src/core/logger';
import type { Transport } from './cases';
import { announce } from './child';

/*
 * Case (a), the yardstick: a bare Koa app with the service's body parser (same options) that
 * answers the JSON it was sent inside the service's envelope. Whatever the service costs
 * beyond this is ours: routing, validation, the OTP work, the upstream calls, logging, metrics.
 *
 * The references (r) are the same app making one upstream call per answer first (get_user's
 * profile read, from the bench's fake upstream): through node:http on a kept-alive agent (what
 * the paths with upstream calls are read against), through the service's own client on its
 * chosen transport, or through that client on axios's own http adapter.
 */

type Fetch = () => Promise<unknown>;

export function createBaselineApp(fetchUpstream?: Fetch): Koa {
  const app = new Koa();
  app.use(bodyParser({ enableTypes: ['json'], detectJSON: () => true, jsonLimit: 64 * 1024, jsonStrict: true }));
  app.use(async (ctx) => {
    const upstream = fetchUpstream ? await fetchUpstream() : undefined;
    ctx.body = { success: true, error: null, data: upstream ?? ctx.request.body ?? null };
  });
  return app;
}

/** One GET of the profile read, as `transport` makes it. */
function upstreamFetch(transport: Transport, upstreams: string): Fetch {
  const url = `${upstreams}/idp${identityPaths.userGet}?uid=bench`;
  if (transport !== 'node:http') {
    const upstream = createUpstream({
      name: 'reference',
      label: 'reference',
      timeoutMs: 10_000,
      log: createLogger('warn'),
      transport,
    });
    let n = 0;
    return async () =>
      (await upstream.call({ requestId: `r${n++}` }, { endpoint: 'user_get', method: 'GET', url })).data;
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  return () =>
    new Promise((resolve, reject) => {
      const request = http.get(url, { agent, headers: { Accept: 'application/json' } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(body));
          } catch (err) {
            reject(err);
          }
        });
      });
      request.on('error', reject);
    });
}

export function startBaseline(reference?: {
  transport: Transport;
  upstreams: string;
}): Promise<{ url: string; close(): Promise<void> }> {
  const app = createBaselineApp(reference && upstreamFetch(reference.transport, reference.upstreams));
  return new Promise((resolve) => {
    const server: Server = app.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
      });
    });
  });
}

if (require.main === module) {
  const [transport, upstreams] = process.argv.slice(2) as [Transport | undefined, string | undefined];
  void startBaseline(transport && upstreams ? { transport, upstreams } : undefined).then(({ url }) =>
    announce({ url }),
  );
}
