import { randomUUID } from 'node:crypto';
import { isCluster, type RedisConnection } from '../../core/redis';
import { isApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { IngestObserver, LoginIngest, LoginIngestEvent } from './login-ingest';
import { defaultBackoffMs } from './memory-queue';
import { createIdleWaiters } from './idle-waiters';

/*
 * The durable login ingest, for a fleet on Redis. A login's event is pushed to a Redis list
 * before the answer goes out, and delivered by whichever instance's worker takes it, with the
 * reliable-queue pattern: an event is moved atomically from `ready` to this worker's own
 * `processing` list, and removed from it only once the collector accepted it (or it was given
 * up after the last retry). Retries wait in a sorted set scored by their due time. Each worker
 * keeps a heartbeat key alive; a worker whose heartbeat expired (a crashed or killed instance)
 * has its `processing` list moved back to `ready` by any other worker. So a collector outage
 * or a restart loses no event: each is delivered at least once.
 */

/**
 * The queue's keys. Every script and transaction of the queue touches several of them at once,
 * so all carry the hash tag `{ingest}`: one slot, on one node of a Redis Cluster (a queue is
 * one list; it could not be spread over nodes anyway). On one server the tag is only a name.
 */
export function ingestKeys(prefix: string) {
  const key = (name: string) => `${prefix}{ingest}:${name}`;
  return {
    ready: key('ready'),
    delayed: key('delayed'),
    dead: key('dead'),
    consumers: key('consumers'),
    processing: (worker: string) => key(`processing:${worker}`),
    alive: (worker: string) => key(`alive:${worker}`),
  };
}

/** The keys before the hash tag (`<prefix>ingest:ready`, ...): adopted from a single server, see `adoptLegacy`. */
const legacyKey = (prefix: string, name: string) => `${prefix}ingest:${name}`;

export interface RedisIngestOptions {
  redis: RedisConnection;
  prefix: string;
  deliver(event: LoginIngestEvent): Promise<unknown>;
  log: Logger;
  maxRetries: number;
  backoffMs?: (retry: number) => number;
  concurrency?: number;
  /** How often an idle worker looks for work from other instances and due retries. */
  pollMs?: number;
  /** A worker silent for this long is presumed dead and its events are taken over. */
  heartbeatMs?: number;
  /** Events held in memory while Redis is unreachable, at most (beyond: dropped). */
  heldMax?: number;
  closeGraceMs?: number;
  /** Events given up, kept for inspection (newest first, bounded). */
  deadLetterMax?: number;
  observer?: IngestObserver;
}

interface Envelope {
  id: string;
  event: LoginIngestEvent;
  attempts: number;
}

// Due retries back to `ready`, atomically: KEYS delayed, ready; ARGV now, batch.
const PROMOTE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, item in ipairs(due) do
  redis.call('ZREM', KEYS[1], item)
  redis.call('LPUSH', KEYS[2], item)
end
return #due
`;

// A dead worker's events back to `ready`: KEYS processing, ready, consumers; ARGV worker id.
const RECLAIM = `
local moved = 0
while redis.call('RPOPLPUSH', KEYS[1], KEYS[2]) do moved = moved + 1 end
redis.call('SREM', KEYS[3], ARGV[1])
return moved
`;

// Settles an item: remove from processing, then retry later, give up, or nothing (delivered).
// KEYS processing, delayed, dead; ARGV item, outcome, next item, due, deadMax.
const SETTLE = `
redis.call('LREM', KEYS[1], 1, ARGV[1])
if ARGV[2] == 'retry' then redis.call('ZADD', KEYS[2], tonumber(ARGV[4]), ARGV[3])
elseif ARGV[2] == 'dead' then
  redis.call('LPUSH', KEYS[3], ARGV[3])
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[5]) - 1)
end
return 1
`;

// An older release's queue into this one, on a single server: KEYS old ready, delayed, dead,
// then new ready, delayed, dead; ARGV deadMax. Oldest events stay first in line.
const ADOPT = `
local moved = 0
while redis.call('LMOVE', KEYS[1], KEYS[4], 'LEFT', 'RIGHT') do moved = moved + 1 end
local delayed = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #delayed, 2 do redis.call('ZADD', KEYS[5], tonumber(delayed[i + 1]), delayed[i]) end
redis.call('DEL', KEYS[2])
moved = moved + #delayed / 2
while redis.call('LMOVE', KEYS[3], KEYS[6], 'LEFT', 'RIGHT') do end
redis.call('LTRIM', KEYS[6], 0, tonumber(ARGV[1]) - 1)
return moved
`;

interface IngestScripts {
  lfaIngestAdopt(
    oldReady: string,
    oldDelayed: string,
    oldDead: string,
    ready: string,
    delayed: string,
    dead: string,
    deadMax: number,
  ): Promise<number>;
  lfaIngestPromote(delayed: string, ready: string, now: number, batch: number): Promise<number>;
  lfaIngestReclaim(processing: string, ready: string, consumers: string, worker: string): Promise<number>;
  lfaIngestSettle(
    processing: string,
    delayed: string,
    dead: string,
    item: string,
    outcome: string,
    next: string,
    due: number,
    deadMax: number,
  ): Promise<number>;
}

function describe(err: unknown): Record<string, unknown> {
  if (isApiError(err)) return { reason: err.reason, upstream_status: err.data.upstream_status };
  return { reason: err instanceof Error ? err.name : 'error' };
}

export function createRedisLoginIngest(
  options: RedisIngestOptions,
): LoginIngest & { /** Stops without handing events back (a crash, for tests). */ abort(): void } {
  const { redis, log, maxRetries } = options;
  const backoff = options.backoffMs ?? defaultBackoffMs;
  const concurrency = options.concurrency ?? 4;
  const pollMs = options.pollMs ?? 500;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const deadMax = options.deadLetterMax ?? 1_000;
  const worker = randomUUID();
  const layout = ingestKeys(options.prefix);
  const keys = { ...layout, processing: layout.processing(worker), alive: layout.alive(worker) };
  const processingOf = layout.processing;
  const aliveOf = layout.alive;

  redis.defineCommand('lfaIngestPromote', { numberOfKeys: 2, lua: PROMOTE });
  redis.defineCommand('lfaIngestReclaim', { numberOfKeys: 3, lua: RECLAIM });
  redis.defineCommand('lfaIngestSettle', { numberOfKeys: 3, lua: SETTLE });
  redis.defineCommand('lfaIngestAdopt', { numberOfKeys: 6, lua: ADOPT });
  const scripts = redis as unknown as IngestScripts;

  const counts = { queued: 0, delivered: 0, retried: 0, failed: 0, dropped: 0 };
  let active = 0;
  let backlog = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pulling = false;
  const idle = createIdleWaiters();
  /*
   * Events whose push failed because Redis was unreachable (a restart, a failover): their login
   * has answered already, so they wait here, oldest first, and are pushed on the next tick that
   * reaches Redis. Lost only if this instance stops before Redis returns.
   */
  const held: string[] = [];
  const heldMax = options.heldMax ?? 10_000;

  const pending = () => active + backlog + held.length;
  const observe = (result: Parameters<IngestObserver['ingest']>[0]) => {
    const observer = options.observer;
    observer?.ingest(result);
    observer?.ingestQueueDepth(pending());
  };

  /** Pushes the held events (one LPUSH, so the oldest is delivered first); they stay held if Redis is still away. */
  const flushHeld = async () => {
    if (held.length === 0) return;
    const batch = held.slice();
    await redis.lpush(keys.ready, ...batch);
    // By value: a direct delivery (deliverHeld) may have taken one out while the push was on its way.
    for (const raw of batch) unhold(raw);
    counts.queued += batch.length;
    backlog += batch.length;
    for (let i = 0; i < batch.length; i++) observe('queued');
    log.info({ events: batch.length }, 'login ingest: events held while Redis was unreachable are queued');
  };

  const unhold = (raw: string): boolean => {
    const at = held.indexOf(raw);
    if (at !== -1) held.splice(at, 1);
    return at !== -1;
  };

  /**
   * A held event is also offered to the collector at once: Redis may stay away longer than this
   * instance lives (a deploy, a crash), and memory does not survive that. Delivered, it is no
   * longer held; refused, it waits for Redis and its retries there. Should Redis have come back
   * and taken it meanwhile, it is delivered twice (ingest is at least once), never lost.
   */
  const deliverHeld = async (raw: string, event: LoginIngestEvent) => {
    try {
      await options.deliver(event);
    } catch {
      return;
    }
    if (!unhold(raw)) return;
    counts.delivered += 1;
    observe('delivered');
    options.observer?.ingestQueueDepth(pending());
  };

  const beat = async () => {
    await redis.multi().set(keys.alive, '1', 'PX', heartbeatMs).sadd(keys.consumers, worker).exec();
  };

  /*
   * Events an older release left under the keys without the hash tag, during a rolling
   * upgrade and after it: queued, waiting to retry, dead letters, and those held by its
   * workers whose heartbeat expired. Only on a single server, the one Redis that release ran
   * on (its keys are in several slots, which no cluster script may touch together). Two
   * commands a tick while nothing is left; to be removed once no fleet runs that release.
   */
  const legacy = (name: string) => legacyKey(options.prefix, name);
  const adoptLegacy = async () => {
    if (isCluster(redis)) return;
    const moved = await scripts.lfaIngestAdopt(
      legacy('ready'),
      legacy('delayed'),
      legacy('dead'),
      keys.ready,
      keys.delayed,
      keys.dead,
      deadMax,
    );
    let reclaimed = 0;
    for (const id of await redis.smembers(legacy('consumers'))) {
      if (await redis.exists(legacy(`alive:${id}`))) continue;
      reclaimed += await scripts.lfaIngestReclaim(legacy(`processing:${id}`), keys.ready, legacy('consumers'), id);
    }
    if (moved + reclaimed > 0)
      log.info({ events: moved + reclaimed }, 'login ingest: adopted the events of an older release');
  };

  /** Takes over the events of workers whose heartbeat expired. */
  const reclaim = async () => {
    const consumers = await redis.smembers(keys.consumers);
    for (const id of consumers) {
      if (id === worker || (await redis.exists(aliveOf(id)))) continue;
      const moved = await scripts.lfaIngestReclaim(processingOf(id), keys.ready, keys.consumers, id);
      if (moved > 0) log.warn({ worker: id, events: moved }, 'login ingest: took over the events of a silent worker');
    }
  };

  const attempt = async (raw: string) => {
    const item = JSON.parse(raw) as Envelope;
    item.attempts += 1;
    try {
      await options.deliver(item.event);
      await scripts.lfaIngestSettle(keys.processing, keys.delayed, keys.dead, raw, 'delivered', '', 0, deadMax);
      counts.delivered += 1;
      observe('delivered');
    } catch (err) {
      if (stopped) return; // Left in `processing`: handed back by close(), or reclaimed after a crash.
      const retry = item.attempts <= maxRetries;
      const next = JSON.stringify(item);
      await scripts.lfaIngestSettle(
        keys.processing,
        keys.delayed,
        keys.dead,
        raw,
        retry ? 'retry' : 'dead',
        next,
        Date.now() + backoff(item.attempts),
        deadMax,
      );
      if (retry) {
        counts.retried += 1;
        log.debug(
          { uid: item.event.uid, attempt: item.attempts, ...describe(err) },
          'login ingest attempt failed: retrying',
        );
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

  /** Pulls work while there is capacity; one pull loop at a time. */
  const pull = async () => {
    if (pulling || stopped) return;
    pulling = true;
    try {
      await flushHeld();
      await scripts.lfaIngestPromote(keys.delayed, keys.ready, Date.now(), 100);
      while (!stopped && active < concurrency) {
        const raw = await redis.lmove(keys.ready, keys.processing, 'RIGHT', 'LEFT');
        if (raw === null) break;
        active += 1;
        void attempt(raw)
          .catch((err) =>
            log.error(
              { err: describe(err) },
              'login ingest: settling an event failed (it stays in processing and will be retried)',
            ),
          )
          .finally(() => {
            active -= 1;
            void pull();
            void wakeIdle();
          });
      }
      const [ready, delayed] = await Promise.all([redis.llen(keys.ready), redis.zcard(keys.delayed)]);
      backlog = ready + delayed;
      options.observer?.ingestQueueDepth(pending());
    } catch (err) {
      // Redis unreachable: the events wait in Redis (or were never queued); try again at the next tick.
      log.debug({ err: describe(err) }, 'login ingest: pull failed');
    } finally {
      pulling = false;
    }
  };

  const wakeIdle = async () => {
    if (!idle.waiting) return;
    await pull();
    if (pending() === 0) idle.wakeAll();
  };

  const tick = async () => {
    try {
      await beat();
      await reclaim();
      await adoptLegacy();
    } catch {
      // Redis down: nothing to do until it returns.
    }
    await pull();
    await wakeIdle();
    if (!stopped) {
      timer = setTimeout(() => void tick(), pollMs);
      timer.unref();
    }
  };
  void tick();

  const drain = (timeoutMs = Infinity): Promise<boolean> => {
    const drained = idle.wait(timeoutMs);
    void wakeIdle();
    return drained;
  };

  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };

  return {
    async enqueue(event) {
      const raw = JSON.stringify({ id: randomUUID(), event, attempts: 0 } satisfies Envelope);
      try {
        await redis.lpush(keys.ready, raw);
      } catch (err) {
        if (held.length < heldMax) {
          held.push(raw);
          log.warn(
            { uid: event.uid, held: held.length, err: describe(err) },
            'login ingest: Redis unreachable, event held until it returns',
          );
          options.observer?.ingestQueueDepth(pending());
          void deliverHeld(raw, event);
          return;
        }
        counts.dropped += 1;
        log.error(
          { uid: event.uid, err: describe(err) },
          'login ingest: event could not be queued (Redis unreachable)',
        );
        observe('dropped');
        return;
      }
      counts.queued += 1;
      backlog += 1;
      observe('queued');
      void pull();
    },
    pending,
    stats: () => ({ ...counts, pending: pending() }),
    drain,
    async close() {
      const finished = await Promise.race([
        new Promise<boolean>((resolve) => {
          const check = () => (active === 0 ? resolve(true) : setTimeout(check, 20).unref());
          stopped = true;
          check();
        }),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), options.closeGraceMs ?? 5_000).unref()),
      ]);
      stop();
      // Hand over: whatever this worker still holds goes back to `ready` for the fleet.
      try {
        await flushHeld();
        await scripts.lfaIngestReclaim(keys.processing, keys.ready, keys.consumers, worker);
        await redis.del(keys.alive);
      } catch (err) {
        log.warn(
          { err: describe(err) },
          'login ingest: could not hand events back on close (they will be reclaimed when the heartbeat expires)',
        );
      }
      if (held.length > 0)
        log.error(
          { events: held.length },
          'login ingest: events held while Redis was unreachable are lost: it did not return before shutdown',
        );
      if (!finished)
        log.warn(
          { in_flight: active },
          'login ingest closed with deliveries still in flight (handed back for redelivery)',
        );
    },
    abort: stop,
  };
}
