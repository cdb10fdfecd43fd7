import Redis from 'ioredis';
import pino from 'pino';
import { loadConfig } from '../../../src/core/config/load';
import { createRedis, redisReady, type RedisConnection } from '../../../src/core/redis';
import { createRedisLoginIngest, ingestKeys } from '../../../src/domain/ingest/redis-queue';
import type { LoginIngestEvent } from '../../../src/domain/ingest';
import { eventually } from '../../support/eventually';
import { useRedisTargets } from '../../support/redis-targets';

/* The durable ingest of issue 6: queued in Redis before the answer, delivered at least once by the fleet. */

const log = pino({ level: 'silent' });
const events = (n: number): LoginIngestEvent[] =>
  Array.from({ length: n }, (_, i) => ({ uid: `u${i}`, accessToken: `token-${i}` }));
/** Deliveries happen on the queue's own polling, in real time: wait for them, not for a fixed time. */
const soon = { timeoutMs: 8_000, intervalMs: 20 };

const targets = useRedisTargets();

// On one server and on a cluster: every script of the queue moves events between its keys, so on
// the cluster a key outside the queue's hash slot fails the suite with CROSSSLOT.
describe.each(targets)('durable login ingest on $name', (target) => {
  let redis: RedisConnection;
  let prefix: string;
  let keys: ReturnType<typeof ingestKeys>;
  /** Events in this queue's hands, waiting in `ready` or held by a worker (one moving between them meanwhile counts twice). */
  const held = async () => {
    let count = await redis.llen(keys.ready);
    for (const worker of await redis.smembers(keys.consumers)) count += await redis.llen(keys.processing(worker));
    return count;
  };
  const open: Array<{ close(): Promise<void>; abort(): void }> = [];
  const ingest = (
    deliver: (e: LoginIngestEvent) => Promise<unknown>,
    extra: Partial<Parameters<typeof createRedisLoginIngest>[0]> = {},
  ) => {
    const queue = createRedisLoginIngest({
      redis,
      prefix,
      deliver,
      log,
      maxRetries: 3,
      backoffMs: () => 20,
      pollMs: 50,
      heartbeatMs: 300,
      closeGraceMs: 200,
      ...extra,
    });
    open.push(queue);
    return queue;
  };

  beforeEach(() => {
    redis = target.client();
    prefix = `ing${Math.random().toString(36).slice(2)}:`;
    keys = ingestKeys(prefix);
  });
  afterEach(async () => {
    for (const queue of open.splice(0)) queue.abort();
  });

  it('queues each event in Redis before enqueue resolves, then delivers it', async () => {
    const delivered: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const queue = ingest(async (e) => {
      await gate;
      delivered.push(e.uid);
    });
    await queue.enqueue({ uid: 'u1', accessToken: 't1' });
    expect(await held()).toBeGreaterThan(0);
    release();
    expect(await queue.drain(5_000)).toBe(true);
    expect(delivered).toEqual(['u1']);
  });

  it('retries through a collector outage and delivers every event', async () => {
    const attempts = new Map<string, number>();
    const delivered = new Set<string>();
    const queue = ingest(async (e) => {
      const n = (attempts.get(e.uid) ?? 0) + 1;
      attempts.set(e.uid, n);
      if (n < 3) throw new Error('collector down');
      delivered.add(e.uid);
    });
    for (const e of events(10)) await queue.enqueue(e);
    // The queue counts a delivery once Redis has settled it, a moment after `deliver` returned.
    await eventually(
      () => expect(queue.stats()).toMatchObject({ queued: 10, delivered: 10, retried: 20, failed: 0 }),
      soon,
    );
    expect(delivered.size).toBe(10);
  });

  it('gives up after the last retry and keeps the event in the dead-letter list', async () => {
    const queue = ingest(
      async () => {
        throw new Error('collector refuses');
      },
      { maxRetries: 1 },
    );
    await queue.enqueue({ uid: 'doomed', accessToken: 'x' });
    await eventually(() => expect(queue.stats().failed).toBe(1), soon);
    const dead = await redis.lrange(keys.dead, 0, -1);
    expect(dead.map((raw) => JSON.parse(raw).event.uid)).toEqual(['doomed']);
  });

  it('loses no event when an instance dies mid-delivery: another instance takes its events over', async () => {
    const delivered: string[] = [];
    // Instance A takes events and never finishes them (it is killed mid-way).
    const a = ingest(() => new Promise(() => {}), { concurrency: 4 });
    const all = events(12);
    for (const e of all) await a.enqueue(e);
    await eventually(async () => expect(await redis.llen(keys.ready)).toBeLessThanOrEqual(8), soon);
    a.abort();

    const b = ingest(async (e) => {
      delivered.push(e.uid);
    });
    await eventually(() => expect(new Set(delivered).size).toBe(all.length), soon);
    expect(new Set(delivered)).toEqual(new Set(all.map((e) => e.uid)));
    await b.close();
  });

  it('hands undelivered events back to the fleet on a graceful close', async () => {
    const a = ingest(() => new Promise(() => {}), { concurrency: 2, closeGraceMs: 50 });
    for (const e of events(5)) await a.enqueue(e);
    await eventually(async () => expect(await redis.llen(keys.ready)).toBeLessThanOrEqual(3), soon);
    await a.close();
    expect(await redis.llen(keys.ready)).toBe(5);
  });

  // Last in the suite: it stops this target's Redis. Found by `npm run soak`: a login answered in
  // the instant Redis went away used to lose its ingest.
  it('queues the events of a Redis outage once Redis returns, and delivers them', async () => {
    const config = loadConfig({
      env: { NODE_ENV: 'test' },
      overrides: { otp: { store: 'redis' }, redis: target.config() },
    });
    const failFast = createRedis(config, log);
    await redisReady(failFast, 15_000);
    const delivered: string[] = [];
    // The collector is down too, so the events wait for Redis (a held event is offered to the collector at once).
    let collectorUp = false;
    const queue = ingest(
      async (e) => {
        if (!collectorUp) throw new Error('collector down');
        delivered.push(e.uid);
      },
      { redis: failFast },
    );
    try {
      await target.kill();
      await queue.enqueue({ uid: 'during-outage', accessToken: 't1' });
      await queue.enqueue({ uid: 'during-outage-2', accessToken: 't2' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(queue.stats()).toMatchObject({ dropped: 0, pending: 2 });
      collectorUp = true;
      await target.restart();
      await eventually(() => expect(delivered).toEqual(['during-outage', 'during-outage-2']), {
        timeoutMs: 20_000,
        intervalMs: 50,
      });
      // The queue counts a delivery once the collector's answer is back, a moment after the collector saw it.
      await eventually(() => expect(queue.stats()).toMatchObject({ queued: 2, delivered: 2, dropped: 0 }), {
        timeoutMs: 5_000,
        intervalMs: 20,
      });
    } finally {
      queue.abort();
      failFast.disconnect();
    }
  }, 60_000);
});

describe('durable login ingest, on one server only', () => {
  const [single] = targets;
  const open: Array<{ abort(): void }> = [];
  afterEach(() => {
    for (const queue of open.splice(0)) queue.abort();
  });

  it('delivers what an older release left under the keys without the hash tag: queued, retrying, and held by a dead worker', async () => {
    const redis = single!.client();
    const prefix = `old${Math.random().toString(36).slice(2)}:`;
    const envelope = (uid: string) => JSON.stringify({ id: uid, event: { uid, accessToken: `t-${uid}` }, attempts: 0 });
    await redis.lpush(`${prefix}ingest:ready`, envelope('queued'));
    await redis.zadd(`${prefix}ingest:delayed`, Date.now(), envelope('retrying'));
    await redis.sadd(`${prefix}ingest:consumers`, 'gone');
    await redis.lpush(`${prefix}ingest:processing:gone`, envelope('held'));
    await redis.lpush(`${prefix}ingest:dead`, envelope('given-up'));

    const delivered: string[] = [];
    const queue = createRedisLoginIngest({
      redis,
      prefix,
      deliver: async (e) => void delivered.push(e.uid),
      log,
      maxRetries: 0,
      pollMs: 50,
    });
    open.push(queue);
    await eventually(() => expect(new Set(delivered)).toEqual(new Set(['queued', 'retrying', 'held'])), soon);
    expect(await redis.lrange(ingestKeys(prefix).dead, 0, -1)).toEqual([envelope('given-up')]);
    expect(
      await redis.exists(
        `${prefix}ingest:ready`,
        `${prefix}ingest:delayed`,
        `${prefix}ingest:processing:gone`,
        `${prefix}ingest:dead`,
      ),
    ).toBe(0);
  });

  it('never rejects when Redis is unreachable: the event is held, and dropped only beyond heldMax', async () => {
    const offline = new Redis(`redis://127.0.0.1:1`, {
      enableOfflineQueue: false,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    const collectorDown = async () => {
      throw new Error('collector down too');
    };
    const queue = createRedisLoginIngest({
      redis: offline,
      prefix: 'offline:',
      deliver: collectorDown,
      log,
      maxRetries: 0,
      pollMs: 50,
      heldMax: 1,
    });
    open.push(queue);
    await expect(queue.enqueue({ uid: 'u1', accessToken: 't' })).resolves.toBeUndefined();
    expect(queue.stats()).toMatchObject({ dropped: 0, pending: 1 });
    await expect(queue.enqueue({ uid: 'u2', accessToken: 't' })).resolves.toBeUndefined();
    expect(queue.stats()).toMatchObject({ dropped: 1, pending: 1 });
    queue.abort();
    offline.disconnect();
  });

  it('offers an event it holds while Redis is unreachable to the collector at once, so a crash before Redis returns does not lose it', async () => {
    const offline = new Redis(`redis://127.0.0.1:1`, {
      enableOfflineQueue: false,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    const delivered: string[] = [];
    const queue = createRedisLoginIngest({
      redis: offline,
      prefix: 'offline:',
      deliver: async (event) => void delivered.push(event.uid),
      log,
      maxRetries: 0,
      pollMs: 50,
    });
    open.push(queue);
    await queue.enqueue({ uid: 'u1', accessToken: 't' });
    await eventually(() => expect(delivered).toEqual(['u1']), soon);
    expect(queue.stats()).toMatchObject({ delivered: 1, dropped: 0, pending: 0 });
    queue.abort();
    offline.disconnect();
  });
});
