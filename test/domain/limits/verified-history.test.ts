import type { RateLimiter } from '../../../src/domain/limits/rate-limiter';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';
import { createVerifiedHistory } from '../../../src/domain/limits/verified-history';
import { testConfig, testDeps } from '../../support/app';

/*
 * The one verified history (src/domain/limits/verified-history.ts) the pumping caps and the bot
 * challenge both read: it lasts `rate_limits.verified_history_days` from the first verification
 * in the period, one inbox is one history whatever its spelling, 0 days keeps nothing, and the
 * limiter it lives in never sees the address.
 */

const DAY = 86_400_000;
const PHONE = '+393331234567';

function setup(days = 90) {
  const clock = { now: Date.UTC(2030, 0, 7) };
  const keys: string[] = [];
  const memory = createMemoryRateLimiter(1000);
  // The limiter as the history uses it, every key it is asked about written down.
  const limiter: RateLimiter = {
    hit: (key, ...rest) => (keys.push(key), memory.hit(key, ...rest)),
    hitEach: (key, ...rest) => (keys.push(key), memory.hitEach(key, ...rest)),
    peek: (key, ...rest) => (keys.push(key), memory.peek(key, ...rest)),
    close: () => memory.close(),
  };
  const history = createVerifiedHistory(limiter, { secret: 's'.repeat(32), days, now: () => clock.now });
  return { clock, history, keys, memory };
}

describe('the verified history', () => {
  it('lasts its period from the first verification in it, and then is gone until the next', async () => {
    const { clock, history } = setup(90);
    expect(await history.has(PHONE)).toBe(false);
    await history.record(PHONE);
    clock.now += 60 * DAY;
    // Verified again within the period: the period still runs from the first.
    await history.record(PHONE);
    clock.now += 30 * DAY - 1;
    expect(await history.has(PHONE)).toBe(true);
    clock.now += 1;
    expect(await history.has(PHONE)).toBe(false);
    await history.record(PHONE);
    expect(await history.has(PHONE)).toBe(true);
  });

  it('is one per inbox, whatever its spelling, and nothing of another', async () => {
    const { history } = setup();
    await history.record('bo.b+a@gmail.com');
    expect(await history.has('bob@googlemail.com')).toBe(true);
    expect(await history.has('alice@gmail.com')).toBe(false);
    expect(await history.has(PHONE)).toBe(false);
  });

  it('keeps nothing with 0 days', async () => {
    const { history, keys } = setup(0);
    await history.record(PHONE);
    expect(await history.has(PHONE)).toBe(false);
    expect(keys).toEqual([]);
  });

  it('names its entries by a keyed digest, never the address', async () => {
    const { history, keys, memory } = setup();
    await history.record(PHONE);
    await history.record('bob@gmail.com');
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(key).toMatch(/^challenge_verified:[A-Za-z0-9_-]{22}$/);
      expect(key).not.toContain('3331234567');
      expect(key).not.toContain('bob');
    }
    // Another secret, another digest: a dump of one deployment's store cannot be matched by hashing numbers alone.
    const other = createVerifiedHistory(memory, { secret: 't'.repeat(32), days: 90, now: () => Date.UTC(2030, 0, 7) });
    expect(await other.has(PHONE)).toBe(false);
  });
});

describe('one verified history for the pumping caps and the bot challenge (deps.ts)', () => {
  it("is the one the pumping defence reads: a phone recorded in the deps' history passes a country cap new numbers cannot", async () => {
    const config = testConfig({
      sms: { allowed_regions: ['IT'], pumping: { country_sends_per_hour: 2, block_min_sends: 1000 } },
    });
    const deps = testDeps(config, { now: () => Date.UTC(2030, 0, 7, 6) });
    try {
      await deps.history.record(PHONE);
      for (const n of ['+393201000001', '+393211000002']) await deps.sms.pumping.admit(n, 'IT');
      await expect(deps.sms.pumping.admit('+393221000003', 'IT')).rejects.toMatchObject({
        reason: 'sms_destination_limited',
      });
      await expect(deps.sms.pumping.admit(PHONE, 'IT')).resolves.toBeUndefined();
      // Kept in the limiter every other limit is counted in: across instances on Redis.
      const fresh = createVerifiedHistory(deps.rateLimiter, {
        secret: deps.secret,
        days: config.rate_limits.verified_history_days,
        now: deps.now,
      });
      expect(await fresh.has(PHONE)).toBe(true);
    } finally {
      await deps.close();
    }
  });
});
