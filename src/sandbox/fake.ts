import type Router from '@koa/router';
import type { Logger } from '../core/logger';
import type { Outbox } from './outbox';
import type { SmsFaults } from './sms-faults';

type ConfigPatch = Record<string, unknown>;

export interface SandboxContext {
  outbox: Outbox;
  log: Logger;
  /** http://127.0.0.1:<port> of the sandbox's one HTTP server. */
  baseUrl: string;
  /** Failures the SMS fakes show when told (failover demos and tests). */
  smsFaults?: SmsFaults;
  /** The service's base URL for receipts (`sms.receipts.callback_base_url` once configured; empty: none): where an app-wide webhook (Meta's) posts. */
  receiptsBase?: () => string;
}

/**
 * One fake upstream. HTTP fakes mount routes under their own prefix on the sandbox's one
 * loopback server; others (SMTP) start their own server. `configure` returns the config keys
 * that point the service's real clients at the fake.
 */
export interface SandboxFake {
  name: string;
  mount?(router: Router, sandbox: SandboxContext): void;
  start?(sandbox: SandboxContext): Promise<ConfigPatch>;
  configure?(sandbox: SandboxContext): ConfigPatch;
  /** Back to the state it started in (seeded accounts only): the sandbox's reset. */
  reset?(): void;
  close?(): Promise<void>;
}
