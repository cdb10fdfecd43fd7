import Redis from 'ioredis';
import pino from 'pino';
import { createRedisLoginIngest } from '../../../src/domain/ingest/redis-queue';
import type { LoginIngestEvent } from '../../../src/domain/ingest';
import { eventually } from '../../support/eventually';
import { startRedisServer, type RedisServer } from '../../support/redis-server';

/* The durable ingest of issue 6: queued in Redis before the answer, delivered at least once by the fleet. */

const log = pino({ level: 'silent' });
const events = (n: number): LoginIngestEvent[] => Array.from({ length: n }, (_, i) => ({ uid: `u${i}`, accessToken: `token-${i}` }));
/** Deliveries happen on the queue's own polling, in real time: wait for them, not for a fixed time. */
const soon = { timeoutMs: 8_000, intervalMs: 20 };

describe('durable login ingest on Redis', () => {
  let server: RedisServer;
  let redis: Redis;
  let prefix: string;
  const open: Array<{ close(): Promise<void>; abort(): void }> = [];
  const ingest = (deliver: (e: LoginIngestEvent) => Promise<unknown>, extra: Partial<Parameters<typeof createRedisLoginIngest>[0]> = {}) => {
    const queue = createRedisLoginIngest({ redis, prefix, deliver, log, maxRetries: 3, backoffMs: () => 20, pollMs: 50, heartbeatMs: 300, closeGraceMs: 200, ...extra });
    open.push(queue);
    return queue;
  };

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  beforeEach(() => {
    prefix = `ing${Math.random().toString(36).slice(2)}:`;
  });
  afterEach(async () => {
    for (const queue of open.splice(0)) queue.abort();
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
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
    const held = (await redis.lrange(`${prefix}ingest:ready`, 0, -1)).length + (await redis.keys(`${prefix}ingest:processing:*`)).length;
    expect(held).toBeGreaterThan(0);
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
    await eventually(() => expect(queue.stats()).toMatchObject({ queued: 10, delivered: 10, retried: 20, failed: 0 }), soon);
    expect(delivered.size).toBe(10);
  });

  it('gives up after the last retry and keeps the event in the dead-letter list', async () => {
    const queue = ingest(async () => {
      throw new Error('collector refuses');
    }, { maxRetries: 1 });
    await queue.enqueue({ uid: 'doomed', accessToken: 'x' });
    await eventually(() => expect(queue.stats().failed).toBe(1), soon);
    const dead = await redis.lrange(`${prefix}ingest:dead`, 0, -1);
    expect(dead.map((raw) => JSON.parse(raw).event.uid)).toEqual(['doomed']);
  });

  it('loses no event when an instance dies mid-delivery: another instance takes its events over', async () => {
    const delivered: string[] = [];
    // Instance A takes events and never finishes them (it is killed mid-way).
    const a = ingest(() => new Promise(() => {}), { concurrency: 4 });
    const all = events(12);
    for (const e of all) await a.enqueue(e);
    await eventually(async () => expect(await redis.llen(`${prefix}ingest:ready`)).toBeLessThanOrEqual(8), soon);
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
    await eventually(async () => expect(await redis.llen(`${prefix}ingest:ready`)).toBeLessThanOrEqual(3), soon);
    await a.close();
    expect(await redis.llen(`${prefix}ingest:ready`)).toBe(5);
  });

  it('never rejects when Redis is unreachable: the event is counted as dropped', async () => {
    const offline = new Redis(`redis://127.0.0.1:1`, { enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 0 });
    const queue = createRedisLoginIngest({ redis: offline, prefix, deliver: async () => {}, log, maxRetries: 0, pollMs: 50 });
    open.push(queue);
    await expect(queue.enqueue({ uid: 'u', accessToken: 't' })).resolves.toBeUndefined();
    expect(queue.stats().dropped).toBe(1);
    queue.abort();
    offline.disconnect();
  });
});
