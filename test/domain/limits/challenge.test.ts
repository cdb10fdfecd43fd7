import fc from 'fast-check';
import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import pino from 'pino';
import type { CallContext } from '../../../src/core/context';
import { isApiError } from '../../../src/core/errors';
import { createMetrics } from '../../../src/core/metrics';
import { createChallengeGate } from '../../../src/domain/limits/challenge';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';
import { createVerifiedHistory } from '../../../src/domain/limits/verified-history';
import { testConfig } from '../../support/app';

/*
 * The password-failures signal of the bot challenge (docs/security.md, "Bot challenge"): wrong
 * passwords are counted on the email's inbox, so a guesser who changes the spelling (a tag,
 * Gmail's dots, googlemail) and the address it comes from still meets the challenge; and the
 * client signals, counted on the client's network, so an IPv6 client rotating its address
 * within its /64 is one client.
 */

const at = (ip: string) => ({ ip }) as unknown as CallContext;

function gate() {
  const metrics = createMetrics();
  const config = testConfig({ rate_limits: { enabled: true }, challenge: { mode: 'adaptive' } });
  const limiter = createMemoryRateLimiter(20_000);
  const now = () => Date.UTC(2030, 0, 7);
  // As deps.ts builds it: one history in the limiter, recorded for what a verified code proved.
  const history = createVerifiedHistory(limiter, {
    secret: 's'.repeat(32),
    days: config.rate_limits.verified_history_days,
    now,
  });
  const challenge = createChallengeGate(config, {
    limiter,
    now,
    secret: 's'.repeat(32),
    log: pino({ level: 'silent' }),
    spend: async () => true,
    history,
    metrics,
  });
  return { challenge, history, metrics };
}

const reasonOf = (attempt: Promise<void>) =>
  attempt.then(
    () => 'heard',
    (err: unknown) => (isApiError(err) ? err.reason : 'thrown'),
  );

describe('the bot challenge before a password login', () => {
  it('counts wrong passwords on the inbox, whatever its spelling and whichever client typed them', async () => {
    const { challenge, metrics } = gate();
    const spellings = ['bo.b+a@gmail.com', 'b.o.b@googlemail.com', 'bob+news@gmail.com'];
    for (const [i, email] of spellings.entries()) {
      expect(
        await reasonOf(
          challenge.check(at(`198.51.100.${i + 1}`), { action: 'login', identifier: email, password: true }),
        ),
      ).toBe('heard');
      await challenge.passwordFailed(`198.51.100.${i + 1}`, email);
    }

    expect(
      await reasonOf(
        challenge.check(at('203.0.113.9'), { action: 'login', identifier: 'bob@gmail.com', password: true }),
      ),
    ).toBe('challenge_required');
    expect(await metrics.render()).toMatch(
      /lfa_challenge_decisions_total\{decision="challenged",signal="password_failures"\} 1\n/,
    );
    // Another inbox, from a client that typed nothing wrong, is heard.
    expect(
      await reasonOf(
        challenge.check(at('203.0.113.10'), { action: 'login', identifier: 'alice@gmail.com', password: true }),
      ),
    ).toBe('heard');
  });
});

describe('the client signals of the bot challenge', () => {
  it('count an IPv6 client on its /64, whichever of its addresses it sends from', async () => {
    const { challenge } = gate();
    const wrongCodes = testConfig({}).challenge.client_verify_failures;
    for (let i = 0; i < wrongCodes; i++) await challenge.verifyFailed(`2001:db8:7:9:${(i + 1).toString(16)}::1`);

    const ask = { action: 'otp_generate', identifier: '+393331234567', phone: '+393331234567' };
    expect(await reasonOf(challenge.check(at('2001:db8:7:9:ffff:1:2:3'), ask))).toBe('challenge_required');
    // The next /64 is another client.
    expect(await reasonOf(challenge.check(at('2001:db8:7:a::1'), ask))).toBe('heard');
  });
});

describe('the client signals on the networks a client sits in', () => {
  const phone = (n: number) => `+39333${String(n).padStart(7, '0')}`;
  const ask = (n: number) => ({ action: 'otp_generate', identifier: phone(n), phone: phone(n) });
  const defaults = testConfig({}).challenge;

  it("challenge a /48's new identifiers once it crossed its budget, not a phone verified lately", async () => {
    const { challenge, history, metrics } = gate();
    await history.record(phone(999));
    // One bot rotating the /48's /64s (a new /56 each time, so neither the /64 nor the /56 crosses).
    for (let i = 0; i < defaults.network_48.identifiers; i++)
      expect(await reasonOf(challenge.check(at(`2001:db8:48:${(i * 0x100).toString(16)}::1`), ask(i)))).toBe('heard');
    expect(await reasonOf(challenge.check(at('2001:db8:48:ff00::1'), ask(500)))).toBe('challenge_required');
    expect(await metrics.render()).toMatch(
      /lfa_challenge_decisions_total\{decision="challenged",signal="network_identifiers"\} 1\n/,
    );
    // A neighbour in the same /48 asking for their own verified phone is heard; a new number of theirs is not.
    expect(await reasonOf(challenge.check(at('2001:db8:48:fe00::7'), ask(999)))).toBe('heard');
    expect(await reasonOf(challenge.check(at('2001:db8:48:fd00::7'), ask(501)))).toBe('challenge_required');
    // Another /48 is another budget.
    expect(await reasonOf(challenge.check(at('2001:db8:49::1'), ask(502)))).toBe('heard');
  });

  it('keep a household /64 and the CGNAT /24 of honest people from challenging one another', async () => {
    const { challenge } = gate();
    // A carrier's NAT pool: 300 people an hour (the busiest Italian hour of the pumping simulation, 6 a minute, and more), each on one of the /24's addresses.
    for (let i = 0; i < 300; i++)
      expect(await reasonOf(challenge.check(at(`100.64.7.${i % 256}`), ask(1000 + i)))).toBe('heard');
    // Households, each on its own /56 (RIPE-690) of one /48, three people each, a code each: none crosses the /48's budget for the others.
    for (let home = 0; home < 6; home++) {
      for (let person = 0; person < 3; person++)
        expect(
          await reasonOf(
            challenge.check(at(`2001:db8:77:${(home * 0x100).toString(16)}::${person + 1}`), ask(home * 10 + person)),
          ),
        ).toBe('heard');
    }
    // A phone of the NAT pool and a household's are heard again after all that.
    expect(await reasonOf(challenge.check(at('100.64.7.9'), ask(1009)))).toBe('heard');
    expect(await reasonOf(challenge.check(at('2001:db8:77:500::1'), ask(50)))).toBe('heard');
  });

  it("count the wider networks' wrong codes and refusals for their new identifiers", async () => {
    const { challenge } = gate();
    for (let i = 0; i < defaults.network_48.refused; i++)
      await challenge.refused(`2001:db8:50:${(i * 0x100).toString(16)}::1`);
    expect(await reasonOf(challenge.check(at('2001:db8:50:ff00::1'), ask(1)))).toBe('challenge_required');
    const second = gate().challenge;
    for (let i = 0; i < defaults.network_24.verify_failures; i++) await second.verifyFailed(`198.51.100.${i % 200}`);
    expect(await reasonOf(second.check(at('198.51.100.250'), ask(2)))).toBe('challenge_required');
    expect(await reasonOf(second.check(at('198.51.101.1'), ask(3)))).toBe('heard');
  });
});

describe('budgets that nest (property)', () => {
  const hextet = fc.integer({ min: 0, max: 0xffff });
  const phone = (n: number) => `+39333${String(n).padStart(7, '0')}`;

  it('addresses sharing a /48 share its budget, whichever /56 and /64 they come from; another /48 does not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(hextet, { minLength: 3, maxLength: 3 }),
        fc.array(fc.tuple(hextet, hextet), { minLength: 20, maxLength: 20 }),
        hextet,
        async (site, subnets, other) => {
          fc.pre(other !== site[2]);
          const { challenge } = gate();
          const prefix = site.map((h) => h.toString(16)).join(':');
          const identifiers = testConfig({}).challenge.network_48.identifiers;
          const answers = [];
          for (let i = 0; i <= identifiers; i++) {
            const [subnet, host] = subnets[i % subnets.length]!;
            // Each identifier from a /56 and a /64 of its own within the /48 (neither's own budget crosses).
            const own = ((((subnet >> 8) + i) & 0xff) << 8) | (subnet & 0xff);
            answers.push(
              await reasonOf(
                challenge.check(at(`${prefix}:${own.toString(16)}:${host.toString(16)}::1`), {
                  action: 'otp_generate',
                  identifier: phone(i),
                  phone: phone(i),
                }),
              ),
            );
          }
          const sibling = `${site[0]!.toString(16)}:${site[1]!.toString(16)}:${other.toString(16)}::1`;
          const elsewhere = await reasonOf(
            challenge.check(at(sibling), { action: 'otp_generate', identifier: phone(9999), phone: phone(9999) }),
          );
          return (
            answers.at(-1) === 'challenge_required' &&
            answers.slice(0, -1).every((a) => a === 'heard') &&
            elsewhere === 'heard'
          );
        },
      ),
      { numRuns: 20 },
    );
  });
});

describe('the velocity signals', () => {
  function clocked() {
    const clock = { now: Date.UTC(2030, 0, 7, 6, 0, 0) };
    const config = testConfig({ rate_limits: { enabled: true }, challenge: { mode: 'adaptive' } });
    const placeOf = (e164: string) => ({ country: 'IT', range: e164.slice(1, 7) });
    const limiter = createMemoryRateLimiter(20_000);
    const history = createVerifiedHistory(limiter, {
      secret: 's'.repeat(32),
      days: config.rate_limits.verified_history_days,
      now: () => clock.now,
    });
    const challenge = createChallengeGate(config, {
      limiter,
      now: () => clock.now,
      secret: 's'.repeat(32),
      log: pino({ level: 'silent' }),
      spend: async () => true,
      history,
      placeOf,
    });
    let n = 0;
    /** `count` new numbers spread over a minute, each from its own client in 900 ranges: the answers. */
    const minute = async (count: number) => {
      const answers: string[] = [];
      for (let i = 0; i < count; i++) {
        n += 1;
        clock.now += Math.floor(60_000 / count);
        const phone = `+393${String(100 + (n % 900))}${String(n).padStart(6, '0')}`;
        answers.push(
          await reasonOf(
            challenge.check(at(`10.${(n >> 8) & 255}.${n & 255}.1`), {
              action: 'otp_generate',
              identifier: phone,
              phone,
            }),
          ),
        );
      }
      return answers;
    };
    return { challenge, minute, config };
  }

  it("judge a country's minute against its own last hours: its usual rate is heard, four times it is not", async () => {
    const { minute, config } = clocked();
    const { country_velocity_floor: floor, velocity_factor: factor, velocity_baseline_hours: hours } = config.challenge;
    // Hours at just under the floor: none challenged, and they make the baseline.
    const usual = floor - 5;
    for (let m = 0; m < hours * 60; m++) expect((await minute(usual)).filter((a) => a !== 'heard')).toEqual([]);
    // Twice the floor is this country's ordinary (under factor times its baseline): heard.
    expect((await minute(2 * floor)).filter((a) => a !== 'heard')).toEqual([]);
    // A spike over factor times its baseline: the new numbers after it are challenged.
    const spike = await minute(Math.ceil(usual * factor * 1.5));
    expect(spike.indexOf('challenge_required')).toBeGreaterThan(0);
    expect(spike.slice(spike.indexOf('challenge_required')).every((a) => a === 'challenge_required')).toBe(true);
  }, 60_000);
});

describe('the proof of work under pressure', () => {
  const base = 2000;
  function pressured() {
    const clock = { now: Date.UTC(2030, 0, 7, 6, 0, 0) };
    const config = testConfig({
      rate_limits: { enabled: true },
      challenge: { mode: 'adaptive', pow_difficulty: base },
    });
    const placeOf = (e164: string) => ({ country: 'IT', range: e164.slice(1, 7) });
    const limiter = createMemoryRateLimiter(20_000);
    const history = createVerifiedHistory(limiter, {
      secret: 's'.repeat(32),
      days: config.rate_limits.verified_history_days,
      now: () => clock.now,
    });
    const challenge = createChallengeGate(config, {
      limiter,
      now: () => clock.now,
      secret: 's'.repeat(32),
      log: pino({ level: 'silent' }),
      spend: async () => true,
      history,
      placeOf,
    });
    return { challenge, clock, config };
  }
  /** The counter a solver had to reach for the challenge this check asked: the work it costs. */
  const workOf = async (attempt: Promise<void>): Promise<number> => {
    const err = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!isApiError(err) || err.reason !== 'challenge_required') throw new Error('not challenged');
    const solution = await solveChallenge({ challenge: (err.data as { challenge: Challenge }).challenge, deriveKey });
    return solution!.counter;
  };
  const phone = (n: number) => `+393${String(100 + (n % 900))}${String(n).padStart(6, '0')}`;

  it("asks one signal's crosser the base difficulty, and a campaign crossing several and spiking up to its ceiling", async () => {
    const { challenge, config } = pressured();
    // One client, its fourth number: one signal (client_identifiers).
    for (let i = 0; i < 3; i++)
      await challenge.check(at('198.51.100.7'), { action: 'otp_generate', identifier: phone(i), phone: phone(i) });
    const person = await workOf(
      challenge.check(at('198.51.100.7'), { action: 'otp_generate', identifier: phone(3), phone: phone(3) }),
    );
    expect(person).toBeLessThanOrEqual(base);

    // A /48 rotating its /64s, all at once: its identifiers, then the country's spike, a hundred times its floor.
    let work = 0;
    for (let i = 10; i < 400; i++) {
      const attempt = challenge.check(at(`2001:db8:48:${(i * 0x100).toString(16)}::1`), {
        action: 'otp_generate',
        identifier: phone(i),
        phone: phone(i),
      });
      if (i < 399) await attempt.catch(() => {});
      else work = await workOf(attempt);
    }
    expect(work).toBeGreaterThan(base * config.challenge.pow_pressure_step);
    expect(work).toBeLessThanOrEqual(base * config.challenge.pow_pressure_max);
  });
});
