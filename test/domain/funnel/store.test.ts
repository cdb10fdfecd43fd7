import fc from 'fast-check';
import pino from 'pino';
import { newJourneyId, journeyStart, isJourneyId } from '../../../src/domain/funnel/journey-id';
import { createMemoryFunnelStore } from '../../../src/domain/funnel/memory-store';
import { createRedisFunnelStore } from '../../../src/domain/funnel/redis-store';
import {
  alignRange,
  CONVERSION_WINDOW_MS,
  DAY_MS,
  HOUR_MS,
  HOUR_RETENTION_MS,
  MINUTE_MS,
  MINUTE_RETENTION_MS,
  type FunnelEntry,
  type FunnelStore,
} from '../../../src/domain/funnel/store';
import { createFunnelTally } from '../../../src/domain/funnel/tally';
import { useRedisTargets } from '../../support/redis-targets';

/*
 * The funnel's counts, on memory, on a real redis-server and on a real three-master Redis
 * Cluster (the same contract on each): a journey brings each `once` count once however many
 * requests carry it, on the buckets of the minute and hour where it started; a range is `[from,
 * to)` on whole buckets, read from minutes when short and recent, from hours otherwise; a
 * journey's one current count moves with it and never back; on Redis every bucket expires after its
 * retention and a journey's set when its window closes. On the cluster the one script of an
 * entry touches four keys: were they not in one slot (their hash tag, the day the journey
 * started), it would fail with CROSSSLOT.
 */

const T0 = Date.UTC(2025, 4, 10, 12, 0, 0);
const targets = useRedisTargets();
const prefix = () => `fs${Math.random().toString(36).slice(2)}:`;
const stores: Array<[string, () => FunnelStore]> = [
  ['memory', () => createMemoryFunnelStore()],
  ...targets.map((target): [string, () => FunnelStore] => [
    target.name,
    () => createRedisFunnelStore(target.client(), prefix()),
  ]),
];

/** One request of a journey that reached `trail`: the trail once, a repeat after. */
const reached = (journey: string, trail: string): FunnelEntry => ({
  journey,
  at: journeyStart(journey),
  once: [{ field: `p|${trail}`, repeat: `s|${trail}` }],
  always: [],
});

describe('the journey id', () => {
  it('is random, says when the journey started, and nothing else', () => {
    const ids = Array.from({ length: 1000 }, () => newJourneyId(T0 + 5));
    expect(new Set(ids).size).toBe(1000);
    expect(ids.every(isJourneyId)).toBe(true);
    expect(journeyStart(ids[0]!)).toBe(T0 + 5);
  });

  it('gives back the start it was made with, from its characters, as its bytes say it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), (startMs) => {
        const id = newJourneyId(startMs);
        expect(journeyStart(id)).toBe(startMs);
        expect(journeyStart(id)).toBe(Buffer.from(id, 'base64url').readUIntBE(0, 6));
      }),
      { numRuns: 2000 },
    );
  });
});

describe.each(stores)('the funnel store on %s', (_name, make) => {
  it('counts a journey once however many requests bring the same count, and counts its repeats apart', async () => {
    const store = make();
    const [a, b] = [newJourneyId(T0 + 5_000), newJourneyId(T0 + 6_000)];
    await store.add([reached(a, 'i.14'), reached(a, 'i.14'), reached(b, 'i.14')], T0 + 7_000);
    await store.add(
      [
        reached(a, 'i.14'),
        { journey: a, at: journeyStart(a), once: [{ field: 'R|i.14|invalid' }], always: ['r|i.14|invalid'] },
      ],
      T0 + 8_000,
    );
    await store.add(
      [{ journey: a, at: journeyStart(a), once: [{ field: 'R|i.14|invalid' }], always: ['r|i.14|invalid'] }],
      T0 + 9_000,
    );
    const { counts } = await store.read(alignRange(T0, T0 + 2 * MINUTE_MS, T0 + 11 * MINUTE_MS), T0 + 11 * MINUTE_MS);
    expect(counts).toEqual({ 'p|i.14': 2, 's|i.14': 2, 'R|i.14|invalid': 1, 'r|i.14|invalid': 2 });
  });

  it('puts every count of a journey on the minute where it started, however late the request', async () => {
    const store = make();
    const early = newJourneyId(T0 + 59_000);
    await store.add(
      [reached(early, 'i.14'), { ...reached(early, 'i.14.90'), once: [{ field: 'p|i.14.90', then: ['c|i.14.90|3'] }] }],
      T0 + 9 * MINUTE_MS,
    );
    const first = await store.read(alignRange(T0, T0 + MINUTE_MS, T0 + 10 * MINUTE_MS), T0 + 10 * MINUTE_MS);
    const second = await store.read(
      alignRange(T0 + MINUTE_MS, T0 + 10 * MINUTE_MS, T0 + 10 * MINUTE_MS),
      T0 + 10 * MINUTE_MS,
    );
    expect(first.counts).toEqual({ 'p|i.14': 1, 'p|i.14.90': 1, 'c|i.14.90|3': 1 });
    expect(second.counts).toEqual({});
  });

  it('keeps one current count per journey: a later one moves it, an earlier one landing late does not', async () => {
    const store = make();
    const [a, b] = [newJourneyId(T0), newJourneyId(T0 + 1_000)];
    const wait = (journey: string, field: string, rank: number): FunnelEntry => ({
      journey,
      at: journeyStart(journey),
      once: [],
      always: [],
      current: { field, rank },
    });
    await store.add([wait(a, 'w|i.14|5', 105), wait(b, 'w|i.14|5', 105)], T0 + 2_000);
    // a goes on to 24; its wait on 14 is taken back. Then its request on 14 lands late (another instance): nothing moves.
    await store.add([wait(a, 'w|i.14.24|20', 220)], T0 + 3_000);
    await store.add([wait(a, 'w|i.14|6', 106), wait(b, 'w|i.14|6', 106)], T0 + 4_000);
    const { counts, at } = await store.read(alignRange(T0, T0 + MINUTE_MS, T0 + 5_000), T0 + 5_000);
    expect(at).toBe(T0 + 5_000);
    expect(Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0))).toEqual({
      'w|i.14.24|20': 1,
      'w|i.14|6': 1,
    });
  });

  it('reads a week from its hours', async () => {
    const store = make();
    await store.add([reached(newJourneyId(T0 - 3 * DAY_MS), 'i.33')], T0 - 3 * DAY_MS);
    await store.add([reached(newJourneyId(T0 + 30 * MINUTE_MS), 'i.33')], T0 + 30 * MINUTE_MS);
    const range = alignRange(T0 - 7 * DAY_MS + 40 * MINUTE_MS, T0 + 40 * MINUTE_MS, T0 + 41 * MINUTE_MS);
    const { counts } = await store.read(range, T0 + 41 * MINUTE_MS);
    expect(counts).toEqual({ 'p|i.33': 2 });
    expect(range).toEqual({ from: T0 + HOUR_MS - 7 * DAY_MS, to: T0 + HOUR_MS, resolution: 'hour' });
  });
});

describe('a range', () => {
  it('is exactly as long as asked, on whole buckets, and the one before it never overlaps it', () => {
    const now = T0 + 17 * MINUTE_MS + 5_000;
    const day = alignRange(now - DAY_MS, now, now);
    expect(day).toEqual({ from: T0 + HOUR_MS - DAY_MS, to: T0 + HOUR_MS, resolution: 'hour' });
    expect(day.to - day.from).toBe(DAY_MS);
    const hour = alignRange(now - HOUR_MS, now, now);
    expect(hour).toEqual({ from: T0 + 18 * MINUTE_MS - HOUR_MS, to: T0 + 18 * MINUTE_MS, resolution: 'minute' });
  });
});

describe.each(targets)('the funnel store’s keys on $name', (target) => {
  it('writes an entry in one script to its minute and its hour, each kept its retention, and the journey’s set as long as its proofs', async () => {
    const journey = newJourneyId(T0 + 90_000);
    const ns = prefix();
    await createRedisFunnelStore(target.client(), ns, { idleMs: 15 * MINUTE_MS }).add(
      [reached(journey, 'i.14')],
      T0 + 90_000,
    );
    const day = Math.floor(T0 / DAY_MS);
    const minute = `${ns}funnel:{${day}}:pm${T0 + MINUTE_MS}`;
    const hour = `${ns}funnel:{${day}}:ph${T0}`;
    const set = `${ns}funnel:{${day}}:j${journey}`;
    expect(await target.client().hgetall(minute)).toEqual({ 'p|i.14': '1' });
    expect(await target.client().hgetall(hour)).toEqual({ 'p|i.14': '1' });
    expect(await target.client().smembers(set)).toEqual(['p|i.14']);
    const [minuteTtl, hourTtl, setTtl] = await Promise.all([
      target.client().pttl(minute),
      target.client().pttl(hour),
      target.client().pttl(set),
    ]);
    expect(minuteTtl).toBeGreaterThan(MINUTE_RETENTION_MS);
    expect(minuteTtl).toBeLessThanOrEqual(MINUTE_RETENTION_MS + MINUTE_MS);
    expect(hourTtl).toBeGreaterThan(HOUR_RETENTION_MS);
    expect(hourTtl).toBeLessThanOrEqual(HOUR_RETENTION_MS + HOUR_MS);
    expect(setTtl).toBeGreaterThan(14 * MINUTE_MS);
    expect(setTtl).toBeLessThanOrEqual(15 * MINUTE_MS);
    // Near the end of its window, no longer than the window.
    const late = newJourneyId(T0);
    await createRedisFunnelStore(target.client(), ns, { idleMs: 15 * MINUTE_MS }).add(
      [reached(late, 'i.14')],
      T0 + CONVERSION_WINDOW_MS - 5 * MINUTE_MS,
    );
    const lateTtl = await target.client().pttl(`${ns}funnel:{${day}}:j${late}`);
    expect(lateTtl).toBeGreaterThan(4 * MINUTE_MS);
    expect(lateTtl).toBeLessThanOrEqual(5 * MINUTE_MS);
  });

  it('counts a journey once when two instances bring the same count at once', async () => {
    const ns = prefix();
    const [one, two] = [createRedisFunnelStore(target.client(), ns), createRedisFunnelStore(target.client(), ns)];
    const journeys = Array.from({ length: 50 }, (_, i) => newJourneyId(T0 + i));
    await Promise.all(
      journeys.flatMap((j) => [
        one.add([reached(j, 'i.33')], T0 + MINUTE_MS),
        two.add([reached(j, 'i.33')], T0 + MINUTE_MS),
      ]),
    );
    const { counts } = await one.read(alignRange(T0, T0 + MINUTE_MS, T0 + MINUTE_MS), T0 + MINUTE_MS);
    expect(counts).toEqual({ 'p|i.33': 50, 's|i.33': 50 });
  });

  it('reads a range that spans two days, whose buckets carry different hash tags (days)', async () => {
    const store = createRedisFunnelStore(target.client(), prefix());
    const midnight = Math.ceil(T0 / DAY_MS) * DAY_MS;
    await store.add([reached(newJourneyId(midnight - 30 * MINUTE_MS), 'i.14')], midnight);
    await store.add([reached(newJourneyId(midnight + 30 * MINUTE_MS), 'i.14')], midnight + 30 * MINUTE_MS);
    const range = alignRange(midnight - HOUR_MS, midnight + HOUR_MS, midnight + HOUR_MS);
    const { counts } = await store.read(range, midnight + HOUR_MS);
    expect(counts).toEqual({ 'p|i.14': 2 });
    expect(range.resolution).toBe('minute');
  });
});

describe('the funnel tally', () => {
  const empty = async () => ({ counts: {}, range: { from: 0, to: 0, resolution: 'minute' as const }, at: 0 });
  it('writes what it gathered in one batch, and logs a store that fails without throwing', async () => {
    const added: FunnelEntry[][] = [];
    const tally = createFunnelTally(
      { add: async (entries) => (added.push([...entries]), entries.map(() => [])), read: empty },
      { flushMs: 60_000, now: () => T0, log: pino({ level: 'silent' }) },
    );
    tally.add({ at: T0, once: [], always: ['a'] });
    tally.add({ at: T0, once: [], always: ['b'] });
    await tally.flush();
    expect(added).toEqual([
      [
        { at: T0, once: [], always: ['a'] },
        { at: T0, once: [], always: ['b'] },
      ],
    ]);

    const warnings: unknown[] = [];
    const failing = createFunnelTally(
      { add: async () => Promise.reject(new Error('down')), read: empty },
      { flushMs: 0, now: () => T0, log: { warn: (o: unknown) => warnings.push(o) } as never },
    );
    failing.add({ at: T0, once: [], always: ['a'] });
    await expect(failing.flush()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});
