import Redis from 'ioredis';
import { createMemoryRateLimiter, type RateLimiter } from '../../../src/domain/limits/rate-limiter';
import { createRedisRateLimiter } from '../../../src/domain/limits/redis-rate-limiter';
import { useRedisTargets } from '../../support/redis-targets';

const targets = useRedisTargets();

// One suite, every store: the limits must mean the same on one instance and on a fleet, on one Redis or a cluster.
describe.each([
  ['memory', () => createMemoryRateLimiter()],
  ...targets.map((target) => [target.name, () => createRedisRateLimiter(target.client(), `t${Math.random()}:`)]),
] as Array<[string, () => RateLimiter]>)('%s rate limiter', (_name, make) => {
  it('allows up to the limit in a window, then refuses with the time left', async () => {
    const limiter = make();
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.hit('ip:1', 3, 60_000, 1_000));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions[2]!.remaining).toBe(0);
    expect(decisions[3]!.retryAfterMs).toBeGreaterThan(0);
    expect(decisions[3]!.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('keeps separate keys apart', async () => {
    const limiter = make();
    await limiter.hit('a', 1, 60_000, 0);
    expect((await limiter.hit('a', 1, 60_000, 0)).allowed).toBe(false);
    expect((await limiter.hit('b', 1, 60_000, 0)).allowed).toBe(true);
  });

  it('peeks at a counter without counting: over its limit, with the time left, once the hits pass it', async () => {
    const limiter = make();
    expect(await limiter.peek('lock', 2, 1_000)).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
    for (let i = 0; i < 2; i++) await limiter.hit('lock', 2, 60_000, 1_000);
    for (let i = 0; i < 5; i++) expect((await limiter.peek('lock', 2, 1_000)).allowed).toBe(true);
    await limiter.hit('lock', 2, 60_000, 1_000);
    const locked = await limiter.peek('lock', 2, 1_000);
    expect(locked.allowed).toBe(false);
    // The window's time left (a minute, less what the calls took), not a token figure.
    expect(locked.retryAfterMs).toBeGreaterThan(50_000);
    expect(locked.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('counts concurrent hits exactly', async () => {
    const limiter = make();
    const results = await Promise.all(Array.from({ length: 20 }, () => limiter.hit('burst', 5, 60_000, 0)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
  });

  // The receiver's short window then its hourly ceiling, as two hits that stop at a refusal, in one step.
  const chain = [
    { name: 'short', limit: 2, windowMs: 60_000 },
    { name: 'long', limit: 3, windowMs: 3_600_000 },
  ];

  it('counts a chain rule by rule and names the first rule that refuses, with its time left', async () => {
    const limiter = make();
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await limiter.hitEach('+393331234567', chain, 1_000));
    expect(decisions.map((d) => d.refused)).toEqual([-1, -1, 0]);
    expect(decisions[0]!.retryAfterMs).toBe(0);
    expect(decisions[2]!.retryAfterMs).toBeGreaterThan(0);
    expect(decisions[2]!.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('does not count the rules after the one that refused, and keeps subjects apart', async () => {
    const limiter = make();
    const tight = [{ name: 'short', limit: 1, windowMs: 60_000 }, chain[1]!];
    // Three refusals by the first rule leave the second at one hit: two more pass it, the third is refused by it.
    for (let i = 0; i < 4; i++) await limiter.hitEach('s', tight, 0);
    const loose = [{ name: 'short', limit: 100, windowMs: 60_000 }, chain[1]!];
    // Same key, so the same counters: the first rule now at 5, the second at 1.
    const after = [];
    for (let i = 0; i < 3; i++) after.push((await limiter.hitEach('s', loose, 0)).refused);
    expect(after).toEqual([-1, -1, 1]);
    expect((await limiter.hitEach('t', tight, 0)).refused).toBe(-1);
  });

  it('counts concurrent chains exactly', async () => {
    const limiter = make();
    const results = await Promise.all(Array.from({ length: 20 }, () => limiter.hitEach('burst', chain, 0)));
    expect(results.filter((r) => r.refused === -1)).toHaveLength(2);
    expect(results.filter((r) => r.refused === 0)).toHaveLength(18);
  });
});

describe('memory rate limiter windows', () => {
  it('opens a new window once the old one has passed', async () => {
    const limiter = createMemoryRateLimiter();
    await limiter.hit('k', 1, 1_000, 0);
    expect((await limiter.hit('k', 1, 1_000, 500)).allowed).toBe(false);
    expect((await limiter.hit('k', 1, 1_000, 1_000)).allowed).toBe(true);
  });

  it('forgets every count when cleared (the sandbox reset)', async () => {
    const limiter = createMemoryRateLimiter();
    await limiter.hit('k', 1, 60_000, 0);
    expect((await limiter.hit('k', 1, 60_000, 0)).allowed).toBe(false);
    limiter.clear();
    expect((await limiter.hit('k', 1, 60_000, 0)).allowed).toBe(true);
  });

  it('peeks at a window that has passed as empty, from the instant a hit would open a new one', async () => {
    const limiter = createMemoryRateLimiter();
    await limiter.hit('k', 1, 1_000, 0);
    await limiter.hit('k', 1, 1_000, 0);
    expect((await limiter.peek('k', 1, 999)).allowed).toBe(false);
    expect(await limiter.peek('k', 1, 1_000)).toEqual({ allowed: true, remaining: 1, retryAfterMs: 0 });
  });

  it('opens each window of a chain on its own, and gives the time left of the one that refused', async () => {
    const limiter = createMemoryRateLimiter();
    const rules = [
      { name: 'short', limit: 1, windowMs: 1_000 },
      { name: 'long', limit: 2, windowMs: 10_000 },
    ];
    expect(await limiter.hitEach('k', rules, 0)).toEqual({ refused: -1, retryAfterMs: 0 });
    expect(await limiter.hitEach('k', rules, 400)).toEqual({ refused: 0, retryAfterMs: 600 });
    // The short window opened again; the long one holds its first hit.
    expect(await limiter.hitEach('k', rules, 1_000)).toEqual({ refused: -1, retryAfterMs: 0 });
    expect(await limiter.hitEach('k', rules, 2_000)).toEqual({ refused: 1, retryAfterMs: 8_000 });
    expect(await limiter.hitEach('k', rules, 10_000)).toEqual({ refused: -1, retryAfterMs: 0 });
  });
});

// The bot challenge's velocity counters (a minute's and an hour's new numbers per country and range) are read back as counts.
describe.each([
  ['memory', () => createMemoryRateLimiter()],
  ...targets.map((target) => [target.name, () => createRedisRateLimiter(target.client(), `v${Math.random()}:`)]),
] as Array<[string, () => RateLimiter]>)('%s rate limiter as an uncapped counter', (_name, make) => {
  it('counts every hit, concurrent ones included, and a peek reads the count without adding to it', async () => {
    const limiter = make();
    const uncapped = Number.MAX_SAFE_INTEGER;
    const hits = await Promise.all(
      Array.from({ length: 25 }, () => limiter.hit('challenge_velocity:c:IT:m1', uncapped, 120_000, 0)),
    );
    expect(hits.every((d) => d.allowed)).toBe(true);
    expect(Math.min(...hits.map((d) => d.remaining))).toBe(uncapped - 25);
    expect((await limiter.peek('challenge_velocity:c:IT:m1', uncapped, 1_000)).remaining).toBe(uncapped - 25);
    expect((await limiter.peek('challenge_velocity:c:IT:m1', uncapped, 1_000)).remaining).toBe(uncapped - 25);
    // Another minute's counter, never hit, reads 0.
    expect((await limiter.peek('challenge_velocity:c:IT:m0', uncapped, 1_000)).remaining).toBe(uncapped);
  });
});

describe.each(targets)('$name rate limiter windows', (target) => {
  it('expires the window on the server', async () => {
    const limiter = createRedisRateLimiter(target.client(), `w${Math.random()}:`);
    // A second hit inside the window is refused: a long window, so a loaded run cannot outlast it.
    await limiter.hit('long', 1, 60_000, 0);
    expect((await limiter.hit('long', 1, 60_000, 0)).allowed).toBe(false);
    // Redis keeps the window's time itself (PEXPIRE): a short window, then a wait well past it.
    await limiter.hit('short', 1, 50, 0);
    await new Promise((r) => setTimeout(r, 200));
    expect((await limiter.hit('short', 1, 50, 0)).allowed).toBe(true);
  });
});

// Found by `npm run soak -- --cluster`: a counter on a restarting node answered 500 internal_error.
describe('redis rate limiter with Redis away', () => {
  it('refuses with store_unavailable (503), never a bare error', async () => {
    const offline = new Redis('redis://127.0.0.1:1', {
      enableOfflineQueue: false,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    });
    offline.on('error', () => {});
    try {
      const limiter = createRedisRateLimiter(offline, 'away:');
      await expect(limiter.hit('ip:1', 3, 60_000, 0)).rejects.toMatchObject({
        reason: 'store_unavailable',
        status: 503,
      });
    } finally {
      offline.disconnect();
    }
  });
});
