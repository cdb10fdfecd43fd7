import pino from 'pino';
import { createMemoryFunnelStore } from '../../../src/domain/funnel/memory-store';
import { createRedisFunnelStore } from '../../../src/domain/funnel/redis-store';
import { DAY_MS, HOUR_MS, MINUTE_MS, type FunnelStore } from '../../../src/domain/funnel/store';
import { createFunnelTally } from '../../../src/domain/funnel/tally';
import { useRedis } from '../../support/redis-server';

/*
 * The funnel's counters, on memory and on a real redis-server: batches add up, a range is read
 * from minute buckets when short and recent, from hour buckets otherwise, and what aged out of
 * its retention is gone.
 */

const T0 = Date.UTC(2025, 4, 10, 12, 0, 0);
const redis = useRedis();
const stores: Array<[string, () => FunnelStore]> = [
  ['memory', () => createMemoryFunnelStore()],
  ['redis', () => createRedisFunnelStore(redis.redis(), `fs${Math.random().toString(36).slice(2)}:`)],
];

describe.each(stores)('the funnel store on %s', (_name, make) => {
  it('adds batches and reads a short range from its minutes', async () => {
    const store = make();
    await store.add({ a: 1, b: 2 }, T0 + 5_000);
    await store.add({ a: 3 }, T0 + MINUTE_MS + 1);
    await store.add({ a: 100 }, T0 + 10 * MINUTE_MS);
    const { counts, range } = await store.read(T0, T0 + 2 * MINUTE_MS, T0 + 11 * MINUTE_MS);
    expect(counts).toEqual({ a: 4, b: 2 });
    expect(range).toEqual({ from: T0, to: T0 + 2 * MINUTE_MS, resolution: 'minute' });
  });

  it('reads a week from its hours, aligned outwards', async () => {
    const store = make();
    await store.add({ a: 1 }, T0 - 3 * DAY_MS);
    await store.add({ a: 2 }, T0 + 30 * MINUTE_MS);
    const { counts, range } = await store.read(T0 - 7 * DAY_MS + 5, T0 + 40 * MINUTE_MS, T0 + 41 * MINUTE_MS);
    expect(counts).toEqual({ a: 3 });
    expect(range.resolution).toBe('hour');
    expect(range.from % HOUR_MS).toBe(0);
    expect(range.to).toBe(T0 + HOUR_MS);
  });
});

describe('the funnel tally', () => {
  it('writes what it gathered in one batch, and logs a store that fails without throwing', async () => {
    const added: Array<Record<string, number>> = [];
    const tally = createFunnelTally({ add: async (c) => void added.push({ ...c }), read: async () => ({ counts: {}, range: { from: 0, to: 0, resolution: 'minute' } }) }, { flushMs: 60_000, now: () => T0, log: pino({ level: 'silent' }) });
    tally.add({ a: 1 });
    tally.add({ a: 1, b: 1 });
    await tally.flush();
    expect(added).toEqual([{ a: 2, b: 1 }]);

    const warnings: unknown[] = [];
    const failing = createFunnelTally({ add: async () => Promise.reject(new Error('down')), read: async () => ({ counts: {}, range: { from: 0, to: 0, resolution: 'minute' } }) }, { flushMs: 0, now: () => T0, log: { warn: (o: unknown) => warnings.push(o) } as never });
    failing.add({ a: 1 });
    await expect(failing.flush()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});
