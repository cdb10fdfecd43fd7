import type { Context } from 'koa';
import pino from 'pino';
import { createKeyChecks, keyMatches } from '../../src/domain/keys';
import { metricsTokenHeld } from '../../src/http/keys';
import { createMemoryRateLimiter } from '../../src/domain/limits/rate-limiter';
import { testConfig } from '../support/app';

const log = pino({ level: 'silent' });

describe('keyMatches', () => {
  it('holds for the exact key only, whatever the length of the guess', () => {
    const key = 'k'.repeat(40);
    expect(keyMatches(key, key)).toBe(true);
    // Digests of equal length are compared: a guess of another length is an answer, never a throw that would tell the length.
    for (const guess of ['', 'k', key.slice(1), `${key}k`, key.toUpperCase(), 'x'.repeat(4096)])
      expect(keyMatches(key, guess)).toBe(false);
  });

  it('opens nothing with an empty key', () => {
    expect(keyMatches('', '')).toBe(false);
    expect(keyMatches('', 'anything')).toBe(false);
  });
});

describe('key checks', () => {
  it('neither compares nor counts a key that is not configured: there is nothing to guess', async () => {
    const limiter = createMemoryRateLimiter();
    const keys = createKeyChecks(
      testConfig({ security: { internal_key: '' }, funnel: { read_key: 'r'.repeat(32) } }),
      limiter,
      () => 0,
    );
    for (let i = 0; i < 20; i++)
      expect(await keys.check('203.0.113.7', { internal: `guess-${i}` }, { log })).toEqual({
        internal: false,
        funnel: false,
        metrics: false,
      });
    expect(await keys.check('203.0.113.7', { funnel: 'r'.repeat(32) }, { log })).toEqual({
      internal: false,
      funnel: true,
      metrics: false,
    });
  });
});

describe('the wrong-key lockout', () => {
  const INTERNAL = 'i'.repeat(32);
  const FUNNEL = 'f'.repeat(32);
  const METRICS = 'm'.repeat(32);
  const setup = () => {
    const clock = { now: 1_900_000_000_000 };
    const keys = createKeyChecks(
      testConfig({ security: { internal_key: INTERNAL }, funnel: { read_key: FUNNEL }, metrics: { token: METRICS } }),
      createMemoryRateLimiter(),
      () => clock.now,
    );
    const refusal = async (ip: string, given: Record<string, string>) => {
      try {
        return await keys.check(ip, given, { log });
      } catch (err) {
        return {
          reason: (err as { reason?: string }).reason,
          data: (err as { data?: unknown }).data,
          headers: (err as { headers?: unknown }).headers,
        };
      }
    };
    return { clock, keys, refusal };
  };

  it('opens nothing without a key, and each key only its own surface', async () => {
    const { keys } = setup();
    expect(await keys.check('203.0.113.7', {}, { log })).toEqual({ internal: false, funnel: false, metrics: false });
    expect(await keys.check('203.0.113.7', { internal: '', funnel: '', metrics: '' }, { log })).toEqual({
      internal: false,
      funnel: false,
      metrics: false,
    });
    expect(await keys.check('203.0.113.7', { funnel: FUNNEL }, { log })).toEqual({
      internal: false,
      funnel: true,
      metrics: false,
    });
    expect(await keys.check('203.0.113.7', { metrics: METRICS, internal: INTERNAL }, { log })).toEqual({
      internal: true,
      funnel: false,
      metrics: true,
    });
    // A key presented under another name is a wrong key there.
    expect(await keys.check('203.0.113.7', { metrics: FUNNEL }, { log })).toEqual({
      internal: false,
      funnel: false,
      metrics: false,
    });
  });

  it('locks out after wrong_keys_per_ip (5) wrong keys, for wrong_key_lockout_seconds (900), with the seconds left as Retry-After', async () => {
    const { clock, refusal } = setup();
    for (let i = 0; i < 5; i++)
      expect(await refusal('203.0.113.7', { internal: `guess-${i}` })).toEqual({
        internal: false,
        funnel: false,
        metrics: false,
      });
    expect(await refusal('203.0.113.7', { internal: 'guess-5' })).toEqual({
      reason: 'rate_limited',
      data: { retry_after: 900, limit: 'wrong_keys_per_ip' },
      headers: { 'Retry-After': '900' },
    });
    clock.now += 899_001;
    expect(await refusal('203.0.113.7', { funnel: FUNNEL })).toMatchObject({
      reason: 'rate_limited',
      headers: { 'Retry-After': '1' },
    });
    clock.now += 999;
    expect(await refusal('203.0.113.7', { funnel: FUNNEL })).toEqual({ internal: false, funnel: true, metrics: false });
  });

  it("refuses nothing to a locked-out client that presents no key: a public request is nobody's guess", async () => {
    const { refusal } = setup();
    for (let i = 0; i < 6; i++) await refusal('203.0.113.7', { internal: `guess-${i}` });
    expect(await refusal('203.0.113.7', { internal: INTERNAL })).toMatchObject({ reason: 'rate_limited' });
    for (const given of [{}, { internal: '', funnel: '', metrics: '' }] as Record<string, string>[])
      expect(await refusal('203.0.113.7', given)).toEqual({ internal: false, funnel: false, metrics: false });
  });

  it("leaves another client unaffected by one client's wrong keys, and locks the guesser's whole IPv6 /64", async () => {
    const { refusal } = setup();
    for (let i = 0; i < 6; i++) await refusal('2001:db8:1:2::7', { metrics: `guess-${i}` });
    expect(await refusal('2001:db8:1:2::7', { metrics: METRICS })).toMatchObject({ reason: 'rate_limited' });
    expect(await refusal('2001:db8:1:2:ffff::1', { metrics: METRICS })).toMatchObject({ reason: 'rate_limited' });
    expect(await refusal('2001:db8:1:3::7', { metrics: METRICS })).toEqual({
      internal: false,
      funnel: false,
      metrics: true,
    });
    expect(await refusal('203.0.113.8', { metrics: METRICS })).toEqual({
      internal: false,
      funnel: false,
      metrics: true,
    });
    // One wrong key of the neighbour is its own first, not the guesser's seventh.
    expect(await refusal('2001:db8:1:3::7', { metrics: 'typo' })).toEqual({
      internal: false,
      funnel: false,
      metrics: false,
    });
  });
});

describe('the metrics token in Authorization', () => {
  const METRICS = 'm'.repeat(32);
  const setup = () => {
    const limiter = createMemoryRateLimiter();
    const keys = createKeyChecks(testConfig({ metrics: { token: METRICS } }), limiter, () => 1_900_000_000_000);
    const held = (authorization: string) =>
      metricsTokenHeld({ keys }, { ip: '203.0.113.7', state: { log }, get: () => authorization } as unknown as Context);
    return { held };
  };

  it('holds for `Bearer <token>` only, however many spaces after Bearer, a trailing space allowed', async () => {
    const { held } = setup();
    for (const header of [`Bearer ${METRICS}`, `bearer  ${METRICS}`, `Bearer ${METRICS} `])
      expect([header, await held(header)]).toEqual([header, true]);
  });

  it('refuses the token with anything before Bearer or after it, or under another scheme', async () => {
    const { held } = setup();
    for (const header of [
      `xBearer ${METRICS}`,
      `Bearer ${METRICS} x`,
      `Bearer ${METRICS}x`,
      `Basic ${METRICS}`,
      METRICS,
    ])
      expect([header, await held(header)]).toEqual([header, false]);
  });
});
