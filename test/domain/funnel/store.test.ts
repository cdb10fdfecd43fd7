import pino from 'pino';
import { createMemoryFunnelStore } from '../../../src/domain/funnel/memory-store';
import { createRedisFunnelStore } from '../../../src/domain/funnel/redis-store';
import { DAY_MS, HOUR_MS, HOUR_RETENTION_MS, MINUTE_MS, MINUTE_RETENTION_MS, type FunnelStore } from '../../../src/domain/funnel/store';
import { createFunnelTally } from '../../../src/domain/funnel/tally';
import { useRedisTargets } from '../../support/redis-targets';

/*
 * The funnel's counters, on memory, on a real redis-server and on a real three-master Redis
 * Cluster (the same contract on each): batches add up, a range is read from minute buckets when
 * short and recent, from hour buckets otherwise, and on Redis every bucket expires after its
 * retention. On the cluster the one script of a batch touches two keys: were they not in one
 * slot (their hash tag, the day), it would fail with CROSSSLOT.
 */

const T0 = Date.UTC(2025, 4, 10, 12, 0, 0);
const targets = useRedisTargets();
const prefix = () => `fs${Math.random().toString(36).slice(2)}:`;
const stores: Array<[string, () => FunnelStore]> = [
  ['memory', () => createMemoryFunnelStore()],
  ...targets.map((target): [string, () => FunnelStore] => [target.name, () => createRedisFunnelStore(target.client(), prefix())]),
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

describe.each(targets)('the funnel store’s buckets on $name', (target) => {
  it('writes a batch in one script to its minute and its hour, each kept its retention from the bucket’s end', async () => {
    const at = T0 + 90_000;
    const ns = prefix();
    await createRedisFunnelStore(target.client(), ns).add({ 'e|a|b': 2 }, at);
    const day = Math.floor(at / DAY_MS);
    const minute = `${ns}funnel:{${day}}:m${T0 + MINUTE_MS}`;
    const hour = `${ns}funnel:{${day}}:h${T0}`;
    expect(await target.client().hgetall(minute)).toEqual({ 'e|a|b': '2' });
    expect(await target.client().hgetall(hour)).toEqual({ 'e|a|b': '2' });
    const [minuteTtl, hourTtl] = await Promise.all([target.client().pttl(minute), target.client().pttl(hour)]);
    expect(minuteTtl).toBeGreaterThan(MINUTE_RETENTION_MS);
    expect(minuteTtl).toBeLessThanOrEqual(MINUTE_RETENTION_MS + MINUTE_MS);
    expect(hourTtl).toBeGreaterThan(HOUR_RETENTION_MS);
    expect(hourTtl).toBeLessThanOrEqual(HOUR_RETENTION_MS + HOUR_MS);
  });

  it('reads a range that spans two days, whose buckets carry different hash tags (days)', async () => {
    const store = createRedisFunnelStore(target.client(), prefix());
    const midnight = Math.ceil(T0 / DAY_MS) * DAY_MS;
    await store.add({ a: 1 }, midnight - 30 * MINUTE_MS);
    await store.add({ a: 2 }, midnight + 30 * MINUTE_MS);
    const { counts, range } = await store.read(midnight - HOUR_MS, midnight + HOUR_MS, midnight + HOUR_MS);
    expect(counts).toEqual({ a: 3 });
    expect(range.resolution).toBe('minute');
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
