import {
  createMemorySmsStore,
  createRedisSmsStore,
  type LedgerEntry,
  type SmsStore,
} from '../../../src/domain/sms/store';
import fc from 'fast-check';
import { createLedger } from '../../../src/domain/sms/ledger';
import { testConfig } from '../../support/app';
import { useRedisTargets } from '../../support/redis-targets';

/* One behaviour on every store the ledger and the pumping defence run on: memory, Redis, Redis Cluster. */

const entry = (id: string, at: number): LedgerEntry => ({
  id,
  channel: 'sms',
  recipient: '+39333*****67',
  country: 'IT',
  number_type: 'MOBILE',
  range: '393331',
  provider: 'twilio',
  message_id: `SM${id}`,
  accepted_at: at,
});

function describeSmsStore(make: () => SmsStore) {
  const now = 1_900_000_000_000;

  it("sums the ledger's hourly counts over the hours asked, every instance's on one store", async () => {
    const store = make();
    const clock = { now };
    const config = testConfig({});
    // Two instances: two ledgers on one store.
    const [one, two] = [1, 2].map(() => createLedger(config, store, { now: () => clock.now, secret: 's' }));
    await one!.recordLogin('code');
    await two!.recordLogin('passkey');
    await two!.recordChallenge('challenged');
    clock.now += 3_600_000;
    await one!.recordLogin('passkey');
    expect(await two!.logins(now)).toEqual({ code: 1, passkey: 2 });
    expect(await one!.logins(clock.now)).toEqual({ code: 0, passkey: 1 });
    expect(await one!.challenges(now)).toEqual({ challenged: 1, solved: 0, failed: 0 });
  });

  it('keeps entries, updates fields of a live one, and lists them oldest first from a time', async () => {
    const store = make();
    await store.addEntry(entry('a', now - 5000), 60_000, now);
    await store.addEntry(entry('b', now - 1000), 60_000, now);
    expect(await store.updateEntry('a', { delivered_at: now, error_code: 'x' })).toMatchObject({
      id: 'a',
      delivered_at: now,
      accepted_at: now - 5000,
    });
    expect(await store.updateEntry('missing', { delivered_at: now })).toBeNull();
    expect((await store.entriesSince(now - 3000, 100)).map((e) => e.id)).toEqual(['b']);
    expect((await store.entriesSince(0, 100)).map((e) => e.id)).toEqual(['a', 'b']);
    expect(await store.entry('b')).toEqual(entry('b', now - 1000));
  });

  it('records a fact about an entry once: a replay changes nothing, and only the fields not set yet are set', async () => {
    const store = make();
    await store.addEntry(entry('a', now), 60_000, now);
    expect(await store.recordOnce('a', 'failed_at', { failed_at: now + 1, error_code: '30003' })).toEqual({
      entry: { ...entry('a', now), failed_at: now + 1, error_code: '30003' },
      changed: true,
    });
    expect(await store.recordOnce('a', 'failed_at', { failed_at: now + 2, error_code: '30008' })).toEqual({
      entry: { ...entry('a', now), failed_at: now + 1, error_code: '30003' },
      changed: false,
    });
    await store.recordOnce('a', 'delivered_at', { delivered_at: now + 3 });
    // A read sets read_at and, only where there is none, delivered_at.
    expect(await store.recordOnce('a', 'read_at', { read_at: now + 4, delivered_at: now + 4 })).toMatchObject({
      entry: { delivered_at: now + 3, read_at: now + 4 },
      changed: true,
    });
    expect(await store.recordOnce('missing', 'failed_at', { failed_at: now })).toBeNull();
  });

  it('finds the newest entry of a recipient digest', async () => {
    const store = make();
    await store.setLatest('digest-1', 'a', 60_000);
    await store.setLatest('digest-1', 'b', 60_000);
    expect(await store.latest('digest-1')).toBe('b');
    expect(await store.latest('digest-2')).toBeNull();
  });

  it('counts in windows and reads a count without adding to it', async () => {
    const store = make();
    expect(await store.increment('k', 60_000, now)).toBe(1);
    expect(await store.increment('k', 60_000, now)).toBe(2);
    expect(await store.count('k', now)).toBe(2);
    expect(await store.count('other', now)).toBe(0);
  });

  it('blocks a range until a time, lists blocks, and lifts them', async () => {
    const store = make();
    await store.block('447911', now + 60_000, now);
    expect(await store.blockedUntil('447911', now)).toBe(now + 60_000);
    expect(await store.blocks(now)).toEqual([{ range: '447911', until: now + 60_000 }]);
    expect(await store.unblock('447911')).toBe(true);
    expect(await store.unblock('447911')).toBe(false);
    expect(await store.blockedUntil('447911', now)).toBeNull();
  });

  it("judges a range's codes only once the grace has passed since the second they were sent", async () => {
    const store = make();
    const judging = { graceMs: 60_000, windowMs: 600_000 };
    const t0 = Math.floor(now / 600_000) * 600_000 + 1000;
    for (let i = 0; i < 4; i += 1)
      await store.tally('447520', t0 + i * 100, { kind: 'sent', at: t0 + i * 100 }, judging);
    // A refused send is taken back; a verification counts for the second its code was sent.
    await store.tally('447520', t0 + 500, { kind: 'unsent', at: t0 + 300 }, judging);
    expect(await store.tally('447520', t0 + 30_000, { kind: 'verified', at: t0 }, judging)).toEqual({
      sends: 0,
      verified: 0,
      watchedSince: null,
    });
    expect(await store.tally('447520', t0 + 60_999, null, judging)).toEqual({
      sends: 0,
      verified: 0,
      watchedSince: null,
    });
    expect(await store.tally('447520', t0 + 61_000, null, judging)).toEqual({
      sends: 3,
      verified: 1,
      watchedSince: null,
    });
    // Verified late: it still counts, in the window its code was judged in.
    expect(await store.tally('447520', t0 + 200_000, { kind: 'verified', at: t0 + 100 }, judging)).toEqual({
      sends: 3,
      verified: 2,
      watchedSince: null,
    });
    await store.watch('447520', t0 + 200_000, t0 + 200_000, judging);
    expect(await store.tally('447520', t0 + 600_000, null, judging)).toEqual({
      sends: 3,
      verified: 2,
      watchedSince: t0 + 200_000,
    });
    await store.watch('447520', null, t0 + 600_000, judging);
    // Two windows on, the figures are gone: the range starts afresh.
    expect(await store.tally('447520', t0 + 1_200_000, null, judging)).toEqual({
      sends: 0,
      verified: 0,
      watchedSince: null,
    });
    expect(await store.tally('447521', t0, null, judging)).toEqual({ sends: 0, verified: 0, watchedSince: null });
  });

  it("forgets a range's figures and watch", async () => {
    const store = make();
    const judging = { graceMs: 1000, windowMs: 600_000 };
    await store.tally('447520', now, { kind: 'sent', at: now }, judging);
    await store.watch('447520', now, now, judging);
    expect(await store.tally('447520', now + 5000, null, judging)).toEqual({
      sends: 1,
      verified: 0,
      watchedSince: now,
    });
    await store.forget('447520');
    expect(await store.tally('447520', now + 5000, null, judging)).toEqual({
      sends: 0,
      verified: 0,
      watchedSince: null,
    });
  });
}

describe('memory SMS store', () => {
  describeSmsStore(() => createMemorySmsStore({ maxEntries: 1000 }));
});

const targets = useRedisTargets();
describe.each(targets)('$name SMS store', (target) => {
  describeSmsStore(() => createRedisSmsStore(target.client(), `t${Math.random().toString(36).slice(2)}:`));

  it('tallies a range as the TALLY script does, through any mix of sends, refusals, verifications and quiet seconds (the memory store sweeps only when something is due)', async () => {
    const judging = { graceMs: 3000, windowMs: 20_000 };
    const step = fc.record({
      advanceMs: fc.integer({ min: 0, max: 7000 }),
      kind: fc.constantFrom('sent', 'unsent', 'verified', null),
      lagMs: fc.integer({ min: 0, max: 9000 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const memory = createMemorySmsStore({ maxEntries: 100 });
        const redis = createRedisSmsStore(target.client(), `p${Math.random().toString(36).slice(2)}:`);
        let now = 1_700_000_000_000;
        for (const { advanceMs, kind, lagMs } of steps) {
          now += advanceMs;
          const event = kind === null ? null : { kind, at: now - lagMs };
          const [fromMemory, fromRedis] = [
            await memory.tally('447520', now, event, judging),
            await redis.tally('447520', now, event, judging),
          ];
          expect(fromMemory).toEqual(fromRedis);
        }
      }),
      { numRuns: 60 },
    );
    // 60 runs of up to 40 round trips each to Redis (or a cluster): a few seconds alone, far more
    // on cores shared with another test file, and never a verdict on speed.
  }, 90_000);

  it('lets Redis expire an entry after the retention period and drops it from the index', async () => {
    const prefix = `r${Math.random().toString(36).slice(2)}:`;
    const store = createRedisSmsStore(target.client(), prefix);
    const now = Date.now();
    await store.addEntry(entry('old', now - 120_000), 60_000, now - 120_000);
    await store.addEntry(entry('new', now), 60_000, now);
    expect(await target.client().pttl(`${prefix}sms:entry:new`)).toBeGreaterThan(50_000);
    expect(await target.client().zrange(`${prefix}sms:ledger`, '0', '-1')).toEqual(['new']);
    expect(JSON.stringify(await target.client().hgetall(`${prefix}sms:entry:new`))).not.toMatch(/3331234567/);
  });
});
