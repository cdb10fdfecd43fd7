import type { Challenge } from 'altcha-lib';
import pino from 'pino';
import type { CallContext } from '../../../src/core/context';
import { apiError, isApiError } from '../../../src/core/errors';
import type { CaptchaClient } from '../../../src/clients/captcha';
import { createChallengeGate } from '../../../src/domain/limits/challenge';
import { createMemoryRateLimiter, type RateLimiter } from '../../../src/domain/limits/rate-limiter';
import { testConfig } from '../../support/app';
import { solvePow } from '../../support/challenge';

/*
 * The gate's side of a hosted challenge (Turnstile, hCaptcha): what it makes of siteverify's
 * answer, with the provider faked at the client's interface (test/clients/captcha.test.ts drives
 * the real client against the sandbox's fakes). Each answer's `solution` is the fault the caller reads.
 */

const NOW = Date.UTC(2030, 0, 7, 6, 0, 0);

type GateDeps = Parameters<typeof createChallengeGate>[1];

/** A gate with these settings over an in-memory limiter and spend, with its log lines kept. */
function gateOf(settings: Record<string, unknown>, deps: Partial<GateDeps> = {}) {
  const config = testConfig({ rate_limits: { enabled: true }, challenge: settings });
  const spent = new Map<string, number>();
  const lines: Array<Record<string, unknown>> = [];
  const challenge = createChallengeGate(config, {
    limiter: createMemoryRateLimiter(1000),
    now: () => NOW,
    secret: 's'.repeat(32),
    log: pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    ),
    spend: async (id, until) => {
      if (spent.has(id)) return false;
      spent.set(id, until);
      return true;
    },
    history: { has: async () => false },
    ...deps,
  });
  return { challenge, spent, lines };
}

function gate(provider: 'turnstile' | 'hcaptcha', answer: CaptchaClient['verify']) {
  const tokens: string[] = [];
  const { challenge, spent, lines } = gateOf(
    { mode: 'always', provider, site_key: 'site-key-1', secret_key: 'secret-key-1', ttl_seconds: 300 },
    {
      captcha: {
        provider,
        verify: (ctx, token) => {
          tokens.push(token);
          return answer(ctx, token);
        },
      },
    },
  );
  /** The fault a solution is answered with, or 'taken'. */
  const solve = async (solution: string, action = 'otp_generate', identifier = 'anna@example.com') => {
    try {
      await challenge.check({ ip: '198.51.100.7', challenge: solution } as unknown as CallContext, {
        action,
        identifier,
      });
      return 'taken';
    } catch (err) {
      if (!isApiError(err) || err.reason !== 'challenge_required') throw err;
      return (err.data as { solution?: string }).solution;
    }
  };
  /** The cdata the challenge asked for this action and identifier. */
  const cdataOf = async (action = 'otp_generate', identifier = 'anna@example.com') => {
    try {
      await challenge.check({ ip: '198.51.100.7' } as unknown as CallContext, { action, identifier });
    } catch (err) {
      return (err as { data: { challenge: { cdata: string } } }).data.challenge.cdata;
    }
    throw new Error('not challenged');
  };
  return { solve, cdataOf, spent, lines, tokens, check: challenge.check };
}

describe('a hosted challenge at the gate', () => {
  it('takes a token of up to 4,096 characters to the provider, and refuses a longer one without asking', async () => {
    const { solve, tokens } = gate('hcaptcha', async () => ({ success: true, errors: [] }));
    expect(await solve('t'.repeat(4096))).toBe('taken');
    expect(await solve('u'.repeat(4097))).toBe('malformed');
    expect(tokens.map((t) => t.length)).toEqual([4096]);
  });

  it('spends a token until the challenge expires: the same one again is spent', async () => {
    const { solve, spent } = gate('hcaptcha', async () => ({ success: true, errors: [] }));
    expect(await solve('token-1')).toBe('taken');
    expect(await solve('token-1')).toBe('spent');
    expect([...spent.values()]).toEqual([NOW + 300 * 1000]);
    // Kept by a digest of the token, never the token.
    expect([...spent.keys()][0]).toMatch(/^challenge:[A-Za-z0-9_-]{43}$/);
    expect(await solve('token-2')).toBe('taken');
  });

  it("answers the provider's timeout-or-duplicate as spent and any other refusal as invalid", async () => {
    const duplicate = gate('hcaptcha', async () => ({ success: false, errors: ['timeout-or-duplicate'] }));
    expect(await duplicate.solve('token-1')).toBe('spent');
    const invalid = gate('hcaptcha', async () => ({ success: false, errors: ['invalid-input-response'] }));
    expect(await invalid.solve('token-1')).toBe('invalid');
  });

  it('answers unverified when the provider cannot be asked, and logs it without the token', async () => {
    const { solve, lines } = gate('turnstile', async () => {
      throw apiError('upstream_error', { params: { service: 'Turnstile' } });
    });
    expect(await solve('token-secret-1')).toBe('unverified');
    const warned = lines.find((line) => line.msg === 'challenge: siteverify failed');
    expect(warned).toMatchObject({ event: 'challenge', provider: 'turnstile', err: 'upstream_error', level: 40 });
    expect(JSON.stringify(lines)).not.toContain('token-secret-1');
    // Anything else thrown is named only as an error: its message could quote what it was sent.
    const broken = gate('turnstile', async () => {
      throw new Error('socket hang up sending token-secret-2');
    });
    expect(await broken.solve('token-secret-2')).toBe('unverified');
    expect(broken.lines.find((line) => line.msg === 'challenge: siteverify failed')).toMatchObject({ err: 'error' });
    expect(JSON.stringify(broken.lines)).not.toContain('token-secret-2');
  });

  it("takes a Turnstile token only for the action and the identifier's data it was made for", async () => {
    let made = { action: '', cdata: '' };
    const { solve, cdataOf } = gate('turnstile', async () => ({ success: true, errors: [], ...made }));
    const cdata = await cdataOf();
    made = { action: 'FeLogin', cdata };
    expect(await solve('token-1')).toBe('mismatch');
    made = { action: 'otp_generate', cdata: 'someone-else' };
    expect(await solve('token-2')).toBe('mismatch');
    made = { action: 'otp_generate', cdata };
    expect(await solve('token-3')).toBe('taken');
    // The data names the action and the identifier: another of either asks for other data.
    expect(await cdataOf('otp_generate', 'bruno@example.com')).not.toBe(cdata);
    expect(await cdataOf('FeLogin', 'anna@example.com')).not.toBe(cdata);
  });

  it('logs each decision with its fault, and a solved one without any', async () => {
    let success = false;
    const { solve, lines } = gate('hcaptcha', async () => ({ success, errors: [] }));
    expect(await solve('token-1')).toBe('invalid');
    success = true;
    expect(await solve('token-2')).toBe('taken');
    const decisions = lines.filter((line) => line.msg?.toString().startsWith('challenge '));
    expect(decisions.map((line) => [line.msg, line.decision, line.fault, line.signal, line.action])).toEqual([
      ['challenge failed', 'failed', 'invalid', 'always', 'otp_generate'],
      ['challenge solved', 'solved', undefined, 'always', 'otp_generate'],
    ]);
    // A hosted challenge has no difficulty to log.
    expect(decisions.every((line) => !('difficulty' in line) && !('signals' in line))).toBe(true);
  });

  it('asks a request that checks twice (before its work and before its send) once: its solution is spent once', async () => {
    const g = gate('hcaptcha', async () => ({ success: true, errors: [] }));
    const ctx = { ip: '198.51.100.7', challenge: 'token-1' } as unknown as CallContext;
    await g.check(ctx, { action: 'FeRegister', identifier: 'anna@example.com' });
    await g.check(ctx, { action: 'FeRegister', identifier: 'anna@example.com' });
    expect(g.spent.size).toBe(1);
    expect(g.tokens).toEqual(['token-1']);
  });
});

describe('a proof-of-work solution at the gate', () => {
  const powGate = (
    limiter: RateLimiter = createMemoryRateLimiter(1000),
    mode: 'always' | 'adaptive' | 'off' = 'always',
  ) =>
    gateOf(
      { mode, provider: 'pow', pow_difficulty: 1000 },
      { limiter, placeOf: (e164: string) => ({ country: 'IT', range: e164.slice(1, 7) }) },
    );
  const ask = { action: 'otp_generate', identifier: 'anna@example.com' };

  it('spends a solution by its id until it expires, logs the difficulty asked, and takes it once', async () => {
    const { challenge, spent, lines } = powGate();
    let asked: Challenge | undefined;
    try {
      await challenge.check({ ip: '198.51.100.7' } as unknown as CallContext, ask);
    } catch (err) {
      asked = (err as { data: { challenge: Challenge } }).data.challenge;
    }
    expect((asked as unknown as { provider: string }).provider).toBe('pow');
    const payload = await solvePow(asked!);
    const ctx = () => ({ ip: '198.51.100.7', challenge: payload }) as unknown as CallContext;
    await challenge.check(ctx(), ask);
    expect([...spent.keys()]).toEqual([expect.stringMatching(/^challenge:./)]);
    expect([...spent.values()][0]).toBeGreaterThan(NOW);
    await expect(challenge.check(ctx(), ask)).rejects.toMatchObject({ data: { solution: 'spent' } });
    const decisions = lines.filter((line) => String(line.msg).startsWith('challenge '));
    expect(decisions.map((line) => [line.decision, line.difficulty, line.signals])).toEqual([
      ['challenged', 1000, ['always']],
      ['solved', undefined, undefined],
      ['failed', 1000, ['always']],
    ]);
  });

  it('warns when a new number cannot join its baseline, and lets the request go on', async () => {
    const limiter = createMemoryRateLimiter(1000);
    const failing: RateLimiter = {
      ...limiter,
      hit: (key, ...rest) =>
        /^challenge_velocity:.*:h\d+$/.test(key) ? Promise.reject(new Error('store down')) : limiter.hit(key, ...rest),
    };
    const { challenge, lines } = powGate(failing, 'adaptive');
    await challenge.check({ ip: '198.51.100.7' } as unknown as CallContext, {
      ...ask,
      identifier: '+393331234567',
      phone: '+393331234567',
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.find((line) => line.msg === 'challenge: could not count a baseline')).toMatchObject({
      event: 'challenge',
      err: 'error',
      level: 40,
    });
  });

  it('asks nothing when off, however many sends one client makes', async () => {
    const { challenge, lines } = powGate(undefined, 'off');
    for (let i = 0; i < 20; i++)
      await challenge.check({ ip: '198.51.100.7' } as unknown as CallContext, {
        action: 'otp_generate',
        identifier: `person${i}@example.com`,
      });
    expect(lines.filter((line) => String(line.msg).startsWith('challenge '))).toEqual([]);
  });
});
