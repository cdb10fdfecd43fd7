import pino from 'pino';
import { createKeyChecks, keyMatches } from '../../src/domain/keys';
import { createMemoryRateLimiter } from '../../src/domain/limits/rate-limiter';
import { testConfig } from '../support/app';

const log = pino({ level: 'silent' });

describe('keyMatches', () => {
  it('holds for the exact key only, whatever the length of the guess', () => {
    const key = 'k'.repeat(40);
    expect(keyMatches(key, key)).toBe(true);
    // Digests of equal length are compared: a guess of another length is an answer, never a throw that would tell the length.
    for (const guess of ['', 'k', key.slice(1), `${key}k`, key.toUpperCase(), 'x'.repeat(4096)]) expect(keyMatches(key, guess)).toBe(false);
  });

  it('opens nothing with an empty key', () => {
    expect(keyMatches('', '')).toBe(false);
    expect(keyMatches('', 'anything')).toBe(false);
  });
});

describe('key checks', () => {
  it('neither compares nor counts a key that is not configured: there is nothing to guess', async () => {
    const limiter = createMemoryRateLimiter();
    const keys = createKeyChecks(testConfig({ security: { internal_key: '' }, funnel: { read_key: 'r'.repeat(32) } }), limiter, () => 0);
    for (let i = 0; i < 20; i++) expect(await keys.check('203.0.113.7', { internal: `guess-${i}` }, { log })).toEqual({ internal: false, funnel: false, metrics: false });
    expect(await keys.check('203.0.113.7', { funnel: 'r'.repeat(32) }, { log })).toEqual({ internal: false, funnel: true, metrics: false });
  });
});
