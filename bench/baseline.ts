import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce } from './child';

/*
 * Case (a), the yardstick: a bare Koa app with the service's body parser (same options) that
 * answers the JSON it was sent inside the service's envelope. Whatever the service costs
 * beyond this is ours: routing, validation, the OTP work, the upstream calls, logging, metrics.
 */

export function createBaselineApp(): Koa {
  const app = new Koa();
  app.use(bodyParser({ enableTypes: ['json'], detectJSON: () => true, jsonLimit: 64 * 1024, jsonStrict: true }));
  app.use((ctx) => {
    ctx.body = { success: true, error: null, data: ctx.request.body ?? null };
  });
  return app;
}

export function startBaseline(): Promise<{ url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server: Server = createBaselineApp().listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
      });
    });
  });
}

if (require.main === module) {
  void startBaseline().then(({ url }) => announce({ url }));
}
