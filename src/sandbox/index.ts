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
import { SMS_FAULTS, SmsFaults, WHATSAPP_STATES, type SmsFault, type WhatsAppState } from './sms-faults';
import { UPSTREAM_FAULTS, UpstreamFaults, type UpstreamFault } from './upstream-faults';

export interface Sandbox {
  /** The configuration with every upstream pointed at its fake. */
  config: Config;
  outbox: Outbox;
  baseUrl: string;
  /** Failures the SMS fakes show when told: `sandbox.smsFaults.set('gateway', 'error_5xx')`. */
  smsFaults: SmsFaults;
  /** Failures any other fake shows when told: `sandbox.upstreamFaults.set('idp', 'error_5xx')`. */
  upstreamFaults: UpstreamFaults;
  /** The fakes back to how they started, the outbox empty. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts in-process fakes of every upstream on loopback and points the configuration at them,
 * so `npm start` with nothing configured runs the whole service through its real clients.
 */
export async function startSandbox(
  config: Config,
  log: Logger,
  fakes: Array<() => SandboxFake> = sandboxFakes,
): Promise<Sandbox> {
  const outbox = new Outbox();
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  const upstreamFaults = new UpstreamFaults();
  app.use(upstreamFaults.middleware);
  app.use(bodyParser({ enableTypes: ['json', 'form', 'text'] }));
  // Before listen: Koa composes its middleware when the server is created. Routes mounted later still count.
  app.use(router.routes());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const smsFaults = new SmsFaults();
  let receiptsBase = '';
  const sandbox: SandboxContext = {
    outbox,
    log: log.child({ component: 'sandbox' }),
    baseUrl,
    smsFaults,
    receiptsBase: () => receiptsBase,
  };
  router.post('/faults/sms/:provider/:fault', (ctx) => {
    const fault = ctx.params.fault as SmsFault;
    if (!SMS_FAULTS.includes(fault)) {
      ctx.status = 400;
      ctx.body = { error: `fault must be one of ${SMS_FAULTS.join(', ')}` };
      return;
    }
    smsFaults.set(ctx.params.provider ?? '', fault);
    ctx.body = { provider: ctx.params.provider, fault };
  });

  router.post('/faults/upstream/:segment/:fault', (ctx) => {
    const fault = ctx.params.fault as UpstreamFault;
    const ms = Number(ctx.query.ms ?? 1000);
    if (!UPSTREAM_FAULTS.includes(fault) || !Number.isInteger(ms) || ms < 0 || ms > 600_000) {
      ctx.status = 400;
      ctx.body = { error: `fault must be one of ${UPSTREAM_FAULTS.join(', ')}; ms a delay up to 600000` };
      return;
    }
    upstreamFaults.set(ctx.params.segment ?? '', fault, ms);
    ctx.body = { upstream: ctx.params.segment, fault, ...(fault === 'slow' ? { ms } : {}) };
  });

  router.post('/faults/whatsapp/:phone/:state', (ctx) => {
    const state = ctx.params.state as WhatsAppState;
    if (!WHATSAPP_STATES.includes(state)) {
      ctx.status = 400;
      ctx.body = { error: `state must be one of ${WHATSAPP_STATES.join(', ')}` };
      return;
    }
    smsFaults.setWhatsApp(ctx.params.phone ?? '', state);
    ctx.body = { phone: ctx.params.phone, state };
  });

  const started = fakes.map((make) => make());
  let patch: Record<string, unknown> = {};
  for (const fake of started) {
    fake.mount?.(router, sandbox);
    if (fake.configure) patch = withProviders(patch, fake.configure(sandbox));
    if (fake.start) patch = withProviders(patch, await fake.start(sandbox));
  }

  // Receipts come back to the service's own port when it is known before it listens (a fixed server.port).
  if (config.server.port !== 0 && config.sms.receipts.callback_base_url === '') {
    patch = deepMerge(patch, {
      sms: {
        receipts: {
          callback_base_url: `http://${config.server.host === '0.0.0.0' ? '127.0.0.1' : config.server.host}:${config.server.port}`,
        },
      },
    });
  }
  const merged = configSchema.parse(deepMerge(config as unknown as Record<string, unknown>, patch));
  receiptsBase = merged.sms.receipts.callback_base_url.replace(/\/+$/, '');
  // The fakes' own address: the service calls them there. What a person opens (the demo, the outbox) is on the service's port.
  log.info({ upstreams: baseUrl, fakes: started.map((f) => f.name) }, 'sandbox upstreams started');
  return {
    config: merged,
    outbox,
    baseUrl,
    smsFaults,
    upstreamFaults,
    reset: () => {
      outbox.clear();
      smsFaults.clear();
      upstreamFaults.clear();
      for (const fake of started) fake.reset?.();
    },
    close: async () => {
      for (const fake of started) await fake.close?.();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Fakes' patches merged; their `sms.providers` lists add up (each fake brings its own providers), where a merge would keep the last. */
function withProviders(patch: Record<string, unknown>, add: Record<string, unknown>): Record<string, unknown> {
  const providersOf = (tree: Record<string, unknown>) =>
    (tree.sms as { providers?: unknown[] } | undefined)?.providers ?? [];
  const providers = [...providersOf(patch), ...providersOf(add)];
  const merged = deepMerge(patch, add);
  return providers.length > 0 ? { ...merged, sms: { ...(merged.sms as Record<string, unknown>), providers } } : merged;
}
