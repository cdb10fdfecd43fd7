import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { deepMerge } from '../core/config/load';
import { configSchema, type Config } from '../core/config/schema';
import type { Logger } from '../core/logger';
import { Outbox } from './outbox';
import type { SandboxContext, SandboxFake } from './fake';
import { sandboxFakes } from './fakes';

export interface Sandbox {
  /** The configuration with every upstream pointed at its fake. */
  config: Config;
  outbox: Outbox;
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * Starts in-process fakes of every upstream on loopback and points the configuration at them,
 * so `npm start` with nothing configured runs the whole service through its real clients.
 */
export async function startSandbox(config: Config, log: Logger, fakes: Array<() => SandboxFake> = sandboxFakes): Promise<Sandbox> {
  const outbox = new Outbox();
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  app.use(bodyParser({ enableTypes: ['json', 'form', 'text'] }));
  // Before listen: Koa composes its middleware when the server is created. Routes mounted later still count.
  app.use(router.routes());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sandbox: SandboxContext = { outbox, log: log.child({ component: 'sandbox' }), baseUrl };

  const started = fakes.map((make) => make());
  let patch: Record<string, unknown> = {};
  for (const fake of started) {
    fake.mount?.(router, sandbox);
    if (fake.configure) patch = deepMerge(patch, fake.configure(sandbox));
    if (fake.start) patch = deepMerge(patch, await fake.start(sandbox));
  }

  const merged = configSchema.parse(deepMerge(config as unknown as Record<string, unknown>, patch));
  // The fakes' own address: the service calls them there. What a person opens (the demo, the outbox) is on the service's port.
  log.info({ upstreams: baseUrl, fakes: started.map((f) => f.name) }, 'sandbox upstreams started');
  return {
    config: merged,
    outbox,
    baseUrl,
    close: async () => {
      for (const fake of started) await fake.close?.();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
