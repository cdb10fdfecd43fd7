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

  it('counts concurrent hits exactly', async () => {
    const limiter = make();
    const results = await Promise.all(Array.from({ length: 20 }, () => limiter.hit('burst', 5, 60_000, 0)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
  });
});

describe('memory rate limiter windows', () => {
  it('opens a new window once the old one has passed', async () => {
    const limiter = createMemoryRateLimiter();
    await limiter.hit('k', 1, 1_000, 0);
    expect((await limiter.hit('k', 1, 1_000, 500)).allowed).toBe(false);
    expect((await limiter.hit('k', 1, 1_000, 1_000)).allowed).toBe(true);
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
    const offline = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 0 });
    offline.on('error', () => {});
    try {
      const limiter = createRedisRateLimiter(offline, 'away:');
      await expect(limiter.hit('ip:1', 3, 60_000, 0)).rejects.toMatchObject({ reason: 'store_unavailable', status: 503 });
    } finally {
      offline.disconnect();
    }
  });
});
