import { randomBytes } from 'node:crypto';
import type { Config } from './config/schema';
import { createLogger, createOtpLogger, type Logger } from './logger';

/*
 * Everything an action may call, built once per process from the configuration.
 * Tests build it with fakes through `overrides`; nothing reaches for globals.
 */
export interface Deps {
  config: Config;
  log: Logger;
  /** SPEC.md's OTP debug log: its own file, its own prefix. */
  otpLog: Logger;
  /** Milliseconds since the epoch; injectable so tests control time. */
  now: () => number;
  /** HMAC key for codes and proofs: `security.secret`, or a per-process random one outside production. */
  secret: string;
  /** True when the store (and whatever else readiness needs) answers. */
  ready(): Promise<boolean>;
  /** Releases sockets, timers and files. */
  close(): Promise<void>;
}

export type DepsOverrides = Partial<Deps>;

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const log = overrides.log ?? createLogger(config.log.level);
  const secret = config.security.secret || randomBytes(32).toString('hex');
  if (!config.security.secret && !overrides.secret) {
    log.warn('security.secret is not set: using a random per-process secret (codes and proofs do not survive a restart or cross instances)');
  }
  const closers: Array<() => Promise<void> | void> = [];
  const deps: Deps = {
    config,
    log,
    otpLog: overrides.otpLog ?? createOtpLogger(config.otp.log_file, config.log.level),
    now: Date.now,
    secret,
    ready: async () => true,
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
    ...overrides,
  };
  return deps;
}
