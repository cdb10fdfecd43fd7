import { createPow } from '../../../src/domain/limits/pow';
import { testConfig } from '../../support/app';
import { solvePow } from '../../support/challenge';

/*
 * A proof-of-work solution is bound to the action and the identifier digest it was issued for
 * (its signed `data`), and to its expiry: solved for one, it is refused for any other, before
 * any hashing, so work done for a cheap action buys no code for another.
 */

const settings = { ...testConfig().challenge, pow_difficulty: 1000, ttl_seconds: 300 };
const key = Buffer.alloc(32, 7);

describe('a proof-of-work solution', () => {
  const clock = { now: 1_900_000_000_000 };
  const pow = createPow(settings, key, () => clock.now);
  let payload: string;
  beforeAll(async () => {
    payload = await solvePow(await pow.issue('otp_generate', 'digest-of-mario'));
  });

  it('is taken for the action and identifier it was issued for, spent under its signature until its expiry', async () => {
    const taken = await pow.verify(payload, 'otp_generate', 'digest-of-mario');
    expect(taken).toEqual({ id: expect.any(String), expiresAt: (Math.floor(clock.now / 1000) + 300) * 1000 });
    const { challenge } = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as {
      challenge: { signature: string };
    };
    expect((taken as { id: string }).id).toBe(challenge.signature);
  });

  it('issued for one action is refused for another action on the same identifier', async () => {
    for (const action of ['FeLogin', 'notify_email', 'register', 'otp_generat', 'otp_generate '])
      expect([action, await pow.verify(payload, action, 'digest-of-mario')]).toEqual([action, { fault: 'mismatch' }]);
  });

  it('issued for one identifier is refused for another on the same action', async () => {
    expect(await pow.verify(payload, 'otp_generate', 'digest-of-anna')).toEqual({ fault: 'mismatch' });
    expect(await pow.verify(payload, 'otp_generate', '')).toEqual({ fault: 'mismatch' });
  });

  it('is refused as expired from its expiry on, and by another key as invalid', async () => {
    const later = createPow(settings, key, () => clock.now + 300_000);
    expect(await later.verify(payload, 'otp_generate', 'digest-of-mario')).toEqual({ fault: 'expired' });
    const justBefore = createPow(settings, key, () => clock.now + 299_000);
    expect(await justBefore.verify(payload, 'otp_generate', 'digest-of-mario')).toEqual({
      id: expect.any(String),
      expiresAt: expect.any(Number),
    });
    const otherKey = createPow(settings, Buffer.alloc(32, 8), () => clock.now);
    expect(await otherKey.verify(payload, 'otp_generate', 'digest-of-mario')).toEqual({ fault: 'invalid' });
  });

  it('takes a genuine payload of 4,096 characters, the longest taken', async () => {
    // The JSON padded with spaces to 3,072 bytes, which base64 writes in exactly 4,096 characters.
    const json = Buffer.from(payload, 'base64').toString('utf8');
    const longest = Buffer.from(json.padEnd(3072, ' ')).toString('base64');
    expect(longest).toHaveLength(4096);
    expect(await pow.verify(longest, 'otp_generate', 'digest-of-mario')).toEqual({
      id: expect.any(String),
      expiresAt: expect.any(Number),
    });
    expect(
      await pow.verify(Buffer.from(json.padEnd(3073, ' ')).toString('base64'), 'otp_generate', 'digest-of-mario'),
    ).toEqual({ fault: 'malformed' });
  });

  it('refuses a payload that is too long, not base64 JSON, or missing its parts', async () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
    const { challenge, solution } = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as {
      challenge: { parameters: Record<string, unknown>; signature: string };
      solution: Record<string, unknown>;
    };
    const malformed = [
      `${payload}${'A'.repeat(4097 - payload.length)}`,
      'not base64 json',
      encode(null),
      encode({ challenge }),
      encode({ solution }),
      encode({ challenge: { parameters: challenge.parameters }, solution }),
      // Parameters that are no object are no challenge of ours, before any of them is read.
      encode({ challenge: { ...challenge, parameters: 'otp_generate' }, solution }),
      encode({ challenge: { ...challenge, signature: 7 }, solution }),
      encode({ challenge, solution: { ...solution, counter: String(solution.counter) } }),
      encode({ challenge, solution: { counter: solution.counter } }),
    ];
    for (const text of malformed)
      expect(await pow.verify(text, 'otp_generate', 'digest-of-mario')).toEqual({ fault: 'malformed' });
    // Another algorithm named in the parameters is no solution of ours, whatever it claims.
    expect(
      await pow.verify(
        encode({
          challenge: { ...challenge, parameters: { ...challenge.parameters, algorithm: 'PBKDF2/SHA-256' } },
          solution,
        }),
        'otp_generate',
        'digest-of-mario',
      ),
    ).toEqual({ fault: 'mismatch' });
    // Parameters naming no action and identifier are bound to nothing, and without an expiry the challenge has expired.
    const { data: _data, expiresAt: _expiresAt, ...unbound } = challenge.parameters;
    expect(
      await pow.verify(
        encode({ challenge: { ...challenge, parameters: unbound }, solution }),
        'otp_generate',
        'digest-of-mario',
      ),
    ).toEqual({ fault: 'mismatch' });
    expect(
      await pow.verify(
        encode({ challenge: { ...challenge, parameters: { ...unbound, data: challenge.parameters.data } }, solution }),
        'otp_generate',
        'digest-of-mario',
      ),
    ).toEqual({ fault: 'expired' });
    // A derived key that is not the one the work finds (ALTCHA's deterministic mode checks the key, whose signature the challenge carries).
    const derivedKey = solution.derivedKey as string;
    const wrong = `${derivedKey.slice(0, -1)}${derivedKey.endsWith('0') ? '1' : '0'}`;
    expect(
      await pow.verify(
        encode({ challenge, solution: { ...solution, derivedKey: wrong } }),
        'otp_generate',
        'digest-of-mario',
      ),
    ).toEqual({ fault: 'invalid' });
  });
});

describe('a solution to a challenge issued before a deploy', () => {
  // Solved from a challenge this code issued with this key, at this clock, kept as the widget sent it: the secrets
  // are derived from the key the same way by every release, so a rolling deploy refuses no widget mid-solve.
  const KEPT = [
    'eyJjaGFsbGVuZ2UiOnsicGFyYW1ldGVycyI6eyJhbGdvcml0aG0iOiJTSEEtMjU2IiwiY29zdCI6MSwiZGF0YSI6eyJhIjoib3RwX2dlbmVyYXRlIiwi',
    'aSI6ImRpZ2VzdC1vZi1tYXJpbyJ9LCJleHBpcmVzQXQiOjE5MDAwMDAzMDAsImtleUxlbmd0aCI6MzIsImtleVByZWZpeCI6IjdmY2I4NDUyY2ZiYTQw',
    'ODdmMWM0ZDA5NzJlZjZkZjA1Iiwia2V5U2lnbmF0dXJlIjoiNWNlNmEzMmM5YzQwNGFkMmJiNmRlMTA2MGZiZDA2MTJlNDA0NzE0YjdiOTlkMjNiYWY4',
    'MGNiNmVlYTE3MDk5MiIsIm5vbmNlIjoiMTJmNDBhNmQ2ZGNjMmVhMTdlOTliNjQ4NGNjN2E1MjEiLCJzYWx0IjoiNjEzNmIyMGUwODNjNDkzOGNkYzFh',
    'YzBkZmQ3ZWYwZDUifSwic2lnbmF0dXJlIjoiNDgzZjRhOWE1ZjU1NGRlN2MzMzhmZmFmNDRmM2MxY2YzMzhkYmY0NTZmZjJmYTRlNzFmY2JkYTkyMWU5',
    'MjNkMSJ9LCJzb2x1dGlvbiI6eyJjb3VudGVyIjoxNywiZGVyaXZlZEtleSI6IjdmY2I4NDUyY2ZiYTQwODdmMWM0ZDA5NzJlZjZkZjA1M2QxYmVkMjZk',
    'MTJmNzZhM2JhMjFmZWIzYmE0MmY0NWUiLCJ0aW1lIjowLjV9fQ==',
  ].join('');

  it('is taken after it by an instance with the same key, and refused by one with another key', async () => {
    const pow = createPow(settings, key, () => 1_900_000_000_000);
    expect(await pow.verify(KEPT, 'otp_generate', 'digest-of-mario')).toEqual({
      id: '483f4a9a5f554de7c338ffaf44f3c1cf338dbf456ff2fa4e71fcbda921e923d1',
      expiresAt: 1_900_000_300_000,
    });
    const other = createPow(settings, Buffer.alloc(32, 8), () => 1_900_000_000_000);
    expect(await other.verify(KEPT, 'otp_generate', 'digest-of-mario')).toEqual({ fault: 'invalid' });
  });
});

describe('the work a challenge asks', () => {
  const pow = createPow(settings, key, () => 1_900_000_000_000);
  const counterOf = async (difficulty?: number) => {
    const { solution } = JSON.parse(
      Buffer.from(await solvePow(await pow.issue('otp_generate', 'digest-of-mario', difficulty)), 'base64').toString(
        'utf8',
      ),
    ) as { solution: { counter: number } };
    return solution.counter;
  };

  it('is between half the difficulty asked, rounded up, and all of it: never less, so a hard challenge is never cheap', async () => {
    const counters = new Set<number>();
    for (let i = 0; i < 60; i++) counters.add(await counterOf(7));
    // Were the bound rounded down, a counter of 3 would be among 60 draws all but about once in 700,000.
    expect([...counters].every((counter) => counter >= 4 && counter <= 7)).toBe(true);
    expect(counters.size).toBeGreaterThan(1);
  });

  it('is drawn from challenge.pow_difficulty when no difficulty is asked', async () => {
    for (let i = 0; i < 5; i++) {
      const counter = await counterOf();
      expect(counter).toBeGreaterThanOrEqual(500);
      expect(counter).toBeLessThanOrEqual(1000);
    }
  });
});
