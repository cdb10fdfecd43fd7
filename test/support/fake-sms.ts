import pino from 'pino';
import type { SmsProvider } from '../../src/clients/sms';
import type { Config } from '../../src/core/config/schema';
import { createMetrics } from '../../src/core/metrics';
import { createMemoryRateLimiter, type RateLimiter } from '../../src/domain/limits/rate-limiter';
import { createVerifiedHistory } from '../../src/domain/limits/verified-history';
import { createSmsServices } from '../../src/domain/sms';
import type { SmsStore } from '../../src/domain/sms/store';
import { testApp, testDeps } from './app';

/*
 * The real app with one SMS provider that accepts everything and remembers who it was sent to:
 * the pumping and bot-challenge tests count the SMS a campaign cost without a gateway behind.
 * Warnings (the pumping defence's `sms_range_*` events) are kept as parsed lines.
 */

/** A provider that accepts every message, and the numbers it was asked to reach, in order. */
export function recordingSmsProvider(onSend: () => void = () => {}): { provider: SmsProvider; sent: string[] } {
  const sent: string[] = [];
  const provider: SmsProvider = {
    name: 'fake',
    kind: 'gateway',
    countries: [],
    weight: 1,
    receipts: false,
    configured: true,
    send: async (_ctx, m) => (onSend(), sent.push(m.to), { status: 200, durationMs: 1 }),
  };
  return { provider, sent };
}

/** The app's limits and its one verified history are kept in `rateLimiter` (a memory one unless given), as deps.ts keeps them. */
export function appWithRecordingSms(
  config: Config,
  options: { now: () => number; store?: SmsStore; rateLimiter?: RateLimiter; onSend?: () => void },
) {
  const { provider, sent } = recordingSmsProvider(options.onSend);
  const metrics = createMetrics();
  const lines: Array<{ event?: string; [field: string]: unknown }> = [];
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => void lines.push(JSON.parse(line) as { event?: string }) },
  );
  const rateLimiter = options.rateLimiter ?? createMemoryRateLimiter();
  // Built here, before the deps, so the SMS services read the very history the deps record.
  const history = createVerifiedHistory(rateLimiter, {
    secret: 's',
    days: config.rate_limits.verified_history_days,
    now: options.now,
  });
  const sms = createSmsServices(config, {
    log,
    now: options.now,
    secret: 's',
    history,
    metrics,
    providers: [provider],
    ...(options.store ? { store: options.store } : {}),
  });
  const deps = testDeps(config, { now: options.now, metrics, sms, rateLimiter, history });
  return { app: testApp(deps).callback(), deps, metrics, sent, lines };
}
