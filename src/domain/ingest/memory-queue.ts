import { isApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { IngestObserver, LoginIngest, LoginIngestEvent } from './login-ingest';
import { createIdleWaiters } from './idle-waiters';

/*
 * The in-memory login ingest: a bounded queue drained by a few concurrent deliveries. A failed
 * delivery is retried up to `maxRetries` times with exponential backoff (and jitter, so a
 * collector coming back is not hit by every retry at once); after the last one the event is
 * counted and logged as failed. Nothing survives a restart: that is what a durable queue
 * behind the same interface is for. Deliveries run outside the request that queued them, so
 * their log lines and debug traces never land in another request's.
 */

export interface MemoryIngestOptions {
  deliver(event: LoginIngestEvent): Promise<unknown>;
  log: Logger;
  /** Retries after the first attempt (`user_collector.max_retries`). */
  maxRetries: number;
  /** Delay before retry `n` (1-based); default 500 ms doubling, at most 30 s, with ±20% jitter. */
  backoffMs?: (retry: number) => number;
  concurrency?: number;
  /** Events held at most (queued, in flight or waiting); beyond it new events are dropped. */
  maxPending?: number;
  /** How long `close` waits for pending events. */
  closeGraceMs?: number;
  /** Read at each count, so it can be wired before the metrics exist. */
  observer?: IngestObserver;
}

interface Item {
  event: LoginIngestEvent;
  /** Attempts made so far. */
  attempts: number;
}

export const defaultBackoffMs = (retry: number): number => {
  const base = Math.min(500 * 2 ** (retry - 1), 30_000);
  return Math.round(base * (0.8 + Math.random() * 0.4));
};

/** The failure, in words safe for a log line: a reason and an upstream status, never the event. */
function describe(err: unknown): Record<string, unknown> {
  if (isApiError(err)) return { reason: err.reason, upstream_status: err.data.upstream_status };
  return { reason: err instanceof Error ? err.name : 'error' };
}

export function createMemoryLoginIngest(options: MemoryIngestOptions): LoginIngest {
  const { deliver, log, maxRetries } = options;
  const backoff = options.backoffMs ?? defaultBackoffMs;
  const concurrency = options.concurrency ?? 4;
  const maxPending = options.maxPending ?? 10_000;
  const queue: Item[] = [];
  const retryTimers = new Map<NodeJS.Timeout, Item>();
  const idle = createIdleWaiters();
  const counts = { queued: 0, delivered: 0, retried: 0, failed: 0, dropped: 0 };
  let active = 0;
  let closed = false;

  const pending = () => queue.length + active + retryTimers.size;
  const observe = (result: Parameters<IngestObserver['ingest']>[0]) => {
    const observer = options.observer;
    observer?.ingest(result);
    observer?.ingestQueueDepth(pending());
  };
  const settle = () => {
    if (pending() === 0) idle.wakeAll();
  };

  const attempt = async (item: Item) => {
    item.attempts += 1;
    try {
      await deliver(item.event);
      counts.delivered += 1;
      observe('delivered');
    } catch (err) {
      if (item.attempts <= maxRetries && !closed) {
        counts.retried += 1;
        const delay = backoff(item.attempts);
        log.debug(
          { uid: item.event.uid, attempt: item.attempts, retry_in_ms: delay, ...describe(err) },
          'login ingest attempt failed: retrying',
        );
        const timer = setTimeout(() => {
          retryTimers.delete(timer);
          queue.push(item);
          pump();
        }, delay);
        timer.unref();
        retryTimers.set(timer, item);
        observe('failed');
      } else {
        counts.failed += 1;
        log.warn(
          { uid: item.event.uid, attempts: item.attempts, ...describe(err) },
          'login ingest failed: event given up',
        );
        observe('dropped');
      }
    }
  };

  const pump = () => {
    while (active < concurrency && queue.length > 0) {
      const item = queue.shift()!;
      active += 1;
      void attempt(item).finally(() => {
        active -= 1;
        pump();
        options.observer?.ingestQueueDepth(pending());
        settle();
      });
    }
  };

  const drop = (event: LoginIngestEvent, why: string) => {
    counts.dropped += 1;
    log.warn({ uid: event.uid, why }, 'login ingest event dropped');
    observe('dropped');
  };

  const drain = (timeoutMs = Infinity): Promise<boolean> =>
    pending() === 0 ? Promise.resolve(true) : idle.wait(timeoutMs);

  return {
    async enqueue(event) {
      if (closed) return drop(event, 'shutting_down');
      if (pending() >= maxPending) return drop(event, 'queue_full');
      counts.queued += 1;
      queue.push({ event, attempts: 0 });
      observe('queued');
      pump();
    },
    pending,
    stats: () => ({ ...counts, pending: pending() }),
    drain,
    async close() {
      closed = true;
      // Waiting retries are not worth holding the shutdown for: try them once more now.
      for (const [timer, item] of retryTimers) {
        clearTimeout(timer);
        retryTimers.delete(timer);
        queue.push(item);
      }
      pump();
      const drained = await drain(options.closeGraceMs ?? 5000);
      if (!drained) {
        const left = queue.splice(0);
        for (const item of left) drop(item.event, 'shutting_down');
        if (active > 0) log.warn({ in_flight: active }, 'login ingest closed with deliveries still in flight');
      }
    },
  };
}
