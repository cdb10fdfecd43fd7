import { createCollectorClient, type CollectorClient } from '../../clients/collector';
import type { Config } from '../../core/config/schema';
import { background } from '../../core/context';
import type { Logger } from '../../core/logger';
import type { IngestObserver, LoginIngest } from './login-ingest';
import { createMemoryLoginIngest } from './memory-queue';
import { createRedisLoginIngest } from './redis-queue';
import type { RedisConnection } from '../../core/redis';

export type { IngestObserver, LoginIngest, LoginIngestEvent } from './login-ingest';
export { createMemoryLoginIngest } from './memory-queue';

export interface LoginIngestOptions {
  collector?: CollectorClient;
  observer?: IngestObserver;
  backoffMs?: (retry: number) => number;
  closeGraceMs?: number;
  /** With a Redis connection the queue is durable and shared by the fleet. */
  redis?: RedisConnection;
}

/** Ingest that skips every event (no collector configured), saying so once. */
function createSkippingLoginIngest(log: Logger): LoginIngest {
  let dropped = 0;
  return {
    async enqueue() {
      if (dropped++ === 0) log.info('user_collector.base_url is not set: login ingest is skipped');
    },
    pending: () => 0,
    stats: () => ({ queued: 0, delivered: 0, retried: 0, failed: 0, dropped, pending: 0 }),
    drain: async () => true,
    close: async () => {},
  };
}

/** The login ingest for this configuration: durable in Redis when the store is Redis, else in memory. */
export function createLoginIngest(config: Config, log: Logger, options: LoginIngestOptions = {}): LoginIngest {
  const collector = options.collector ?? createCollectorClient(config, log);
  if (!collector.configured) return createSkippingLoginIngest(log);
  const common = {
    // Deliveries serve no request: they run after the login answered, and retry on their own.
    deliver: (event: Parameters<CollectorClient['ingestLogin']>[1]) =>
      collector.ingestLogin(background('login-ingest'), event),
    log: log.child({ component: 'login-ingest' }),
    maxRetries: config.user_collector.max_retries,
    observer: options.observer,
    backoffMs: options.backoffMs,
    closeGraceMs: options.closeGraceMs ?? config.server.shutdown_grace_seconds * 1000,
  };
  if (options.redis)
    return createRedisLoginIngest({ ...common, redis: options.redis, prefix: config.redis.key_prefix });
  return createMemoryLoginIngest(common);
}
