import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import pino from 'pino';
import type { CallContext } from '../../../src/core/context';
import { isApiError } from '../../../src/core/errors';
import { createChallengeGate } from '../../../src/domain/limits/challenge';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';
import { createVerifiedHistory } from '../../../src/domain/limits/verified-history';
import { testConfig } from '../../support/app';

/*
 * Which signal the bot challenge names, and what it prices: each adaptive signal on its own
 * (the first one crossed is the one counted and logged), and the proof of work's difficulty by
 * kinds of signal crossed together (docs/security.md, "Harder under pressure"). The work asked is
 * the challenge's difficulty, read from its solution: a counter drawn between half of it and it.
 */

const BASE = 1000;
const STEP = 4;
const ctx = (ip?: string) => ({ ip }) as unknown as CallContext;
const phone = (n: number) => `+393${String(100 + (n % 900))}${String(n).padStart(6, '0')}`;

interface Destination {
  flagged: boolean;
  rangeSends: number;
  countrySends: number;
}

function gate(
  destination: Destination = { flagged: false, rangeSends: 0, countrySends: 0 },
  { mode = 'adaptive', places = true, lines = [] as Array<Record<string, unknown>> } = {},
) {
  const clock = { now: Date.UTC(2030, 0, 7, 6, 0, 0) };
  const config = testConfig({
    rate_limits: { enabled: true },
    challenge: { mode: mode as 'adaptive', pow_difficulty: BASE, pow_pressure_step: STEP, refusal_seconds: 60 },
    sms: { pumping: { prefix_sends_per_hour: 100, country_sends_per_hour: 1000 } },
  });
  const limiter = createMemoryRateLimiter(20_000);
  const history = createVerifiedHistory(limiter, {
    secret: 's'.repeat(32),
    days: config.rate_limits.verified_history_days,
    now: () => clock.now,
  });
  const named: string[] = [];
  const challenge = createChallengeGate(config, {
    limiter,
    now: () => clock.now,
    secret: 's'.repeat(32),
    log: pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    ),
    spend: async () => true,
    history,
    metrics: { challenge: (_decision, signal) => void named.push(signal) },
    destination: async () => destination,
    ...(places
      ? { placeOf: (e164: string) => ({ country: e164.startsWith('+33') ? 'FR' : 'IT', range: e164.slice(1, 7) }) }
      : {}),
  });
  /** The difficulty a check asks for (BASE, BASE * STEP, ...), told by its solution's counter; or 'heard'. */
  const ask = async (ip: string | undefined, fields: { identifier: string; phone?: string; password?: boolean }) => {
    try {
      await challenge.check(ctx(ip), { action: fields.password ? 'login' : 'otp_generate', ...fields });
      return 'heard' as const;
    } catch (err) {
      if (!isApiError(err) || err.reason !== 'challenge_required') throw err;
      const asked = (err.data as { challenge: Challenge }).challenge;
      const { counter } = (await solveChallenge({ challenge: asked, deriveKey }))!;
      let difficulty = BASE;
      while (counter > difficulty) difficulty *= STEP;
      return difficulty;
    }
  };
  return { challenge, clock, config, history, named, ask };
}

describe('the signals of the bot challenge, one by one', () => {
  it('hears a fresh client asking a code to a quiet destination', async () => {
    const { ask, named } = gate();
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe('heard');
    expect(await ask('2001:db8:1:2::7', { identifier: phone(2), phone: phone(2) })).toBe('heard');
    expect(named).toEqual([]);
  });

  it('names a flagged range, at the base difficulty when it is the only signal', async () => {
    const { ask, named } = gate({ flagged: true, rangeSends: 0, countrySends: 0 });
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE);
    expect(named).toEqual(['range_flagged']);
  });

  it("names a country's SMS from the hour they reach its share of the cap, not one before", async () => {
    const share = testConfig({}).challenge.destination_share;
    const at = Math.ceil(share * 1000);
    expect(
      await gate({ flagged: false, rangeSends: 0, countrySends: at - 1 }).ask('198.51.100.7', {
        identifier: phone(1),
        phone: phone(1),
      }),
    ).toBe('heard');
    const { ask, named } = gate({ flagged: false, rangeSends: 0, countrySends: at });
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE);
    expect(named).toEqual(['country_rate']);
  });

  it("names a range's SMS from the hour they reach its share of the pumping watch, not one before", async () => {
    const share = testConfig({}).challenge.destination_share;
    // prefix_sends_per_hour is 100 in this gate: the range's rate is its share of it.
    const at = Math.ceil(share * 100);
    expect(
      await gate({ flagged: false, rangeSends: at - 1, countrySends: 0 }).ask('198.51.100.7', {
        identifier: phone(1),
        phone: phone(1),
      }),
    ).toBe('heard');
    const { ask, named } = gate({ flagged: false, rangeSends: at, countrySends: 0 });
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE);
    expect(named).toEqual(['range_rate']);
  });

  it("counts a client's sends across its window in seconds, then forgets them once it has passed", async () => {
    const { ask, named, clock, config } = gate();
    const { client_sends: sends, window_seconds: window } = config.challenge;
    const spacing = 10_000;
    // One number asked again and again, ten seconds apart: all within the window.
    for (let i = 0; i < sends; i++) {
      expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe('heard');
      clock.now += spacing;
    }
    // Its /24 counts the same sends (a second kind of signal): what matters here is that they are counted.
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).not.toBe('heard');
    expect(named).toEqual(['client_sends']);
    clock.now += window * 1000;
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe('heard');
  });

  it("weighs the previous minute's new numbers by what of it is still within the last minute", async () => {
    const { ask, named, clock, config } = gate();
    const floor = config.challenge.range_velocity_floor;
    // The gate's clock starts on a minute: the floor's worth of new numbers in that minute, each heard.
    for (let i = 0; i < floor; i++) {
      clock.now += 1000;
      const number = `+39312345${String(i).padStart(4, '0')}`;
      expect(await ask(`10.0.${i}.1`, { identifier: number, phone: number })).toBe('heard');
    }
    // A millisecond into the next minute almost all of the last one still counts: one more is over the floor.
    clock.now = Math.ceil(clock.now / 60_000) * 60_000 + 1;
    const next = '+393123459999';
    expect(await ask('10.1.0.1', { identifier: next, phone: next })).toBe(BASE);
    expect(named).toEqual(['range_velocity']);
  });

  it('prices kinds, not signals: a range and its country over their shares are one kind, a flag with them another', async () => {
    const { ask } = gate({ flagged: false, rangeSends: 100, countrySends: 1000 });
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE);
    const flagged = gate({ flagged: true, rangeSends: 100, countrySends: 1000 });
    expect(await flagged.ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE * STEP);
  });

  it("names a client's own signals client_*, one kind however many, and its wider network's network_*, another", async () => {
    const { ask, named, config } = gate();
    const { client_sends: sends, client_identifiers: ids } = config.challenge;
    // One client past both its sends and its identifiers: one kind, the base difficulty.
    let last: number | 'heard' = 'heard';
    for (let i = 0; i <= Math.max(sends, ids); i++)
      last = await ask('198.51.100.7', { identifier: phone(i), phone: phone(i) });
    expect(last).toBe(BASE);
    expect(named.every((signal) => signal.startsWith('client_'))).toBe(true);
    expect(named.length).toBeGreaterThan(0);
  });

  it("counts a /48's new identifiers as network_identifiers, beside a client's own signal another kind", async () => {
    const { ask, named, config } = gate();
    const budget = config.challenge.network_48.identifiers;
    // A new /64 (and /56) for each number: only the /48 sees them all.
    for (let i = 0; i < budget; i++)
      await ask(`2001:db8:48:${(i * 0x100).toString(16)}::1`, { identifier: phone(i), phone: phone(i) });
    expect(named).toEqual([]);
    expect(await ask('2001:db8:48:ff00::1', { identifier: phone(budget), phone: phone(budget) })).toBe(BASE);
    expect(named).toEqual(['network_identifiers']);
    // Its own /64 over its identifiers too: two kinds.
    const client = '2001:db8:48:ff00::';
    let last: number | 'heard' = 'heard';
    for (let i = 1; i <= config.challenge.client_identifiers + 1; i++)
      last = await ask(`${client}${i}`, { identifier: phone(budget + i), phone: phone(budget + i) });
    expect(last).toBe(BASE * STEP);
  });

  it("names a range's spike of new numbers range_velocity while its country stays under its floor", async () => {
    const { ask, named, clock, config } = gate();
    const floor = config.challenge.range_velocity_floor;
    const answers: Array<number | 'heard'> = [];
    // One range, a new number each from its own client, several times the floor in a minute.
    for (let i = 0; i < floor * 3; i++) {
      clock.now += 1000;
      const number = `+39312345${String(i).padStart(4, '0')}`;
      answers.push(await ask(`10.0.${i}.1`, { identifier: number, phone: number }));
    }
    expect(answers.filter((a) => a !== 'heard').length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set(['range_velocity']));
  });

  it("names a country's spike country_velocity past its floor, not at it, and counts each country apart", async () => {
    const { ask, named, clock, config } = gate();
    const floor = config.challenge.country_velocity_floor;
    // New numbers of one country, each of its own range and client, all within one minute: the floor's worth is heard.
    for (let i = 0; i < floor; i++) {
      clock.now += 1000;
      expect(await ask(`10.1.${i}.1`, { identifier: phone(i), phone: phone(i) })).toBe('heard');
    }
    clock.now += 1000;
    expect(await ask('10.2.0.1', { identifier: phone(floor), phone: phone(floor) })).toBe(BASE);
    expect(named).toEqual(['country_velocity']);
    // Another country's first new number is not part of it.
    expect(await ask('10.2.1.1', { identifier: '+33612345678', phone: '+33612345678' })).toBe('heard');
  });

  it("prices a range's and its country's velocity as one kind, harder by the spike's doublings", async () => {
    const { ask, named, clock, config } = gate();
    const over = config.challenge.country_velocity_floor + 1;
    // One range's new numbers, each from its own client, within a minute: past the country's floor too.
    let last: number | 'heard' = 'heard';
    for (let i = 0; i < over; i++) {
      clock.now += 1000;
      const number = `+39312345${String(i).padStart(4, '0')}`;
      last = await ask(`10.3.${i}.1`, { identifier: number, phone: number });
    }
    expect(named[named.length - 1]).toBe('range_velocity');
    // The range at 31 over its floor of 5 (6.2 times, two doublings), the country over its own: one kind.
    const spike = over / config.challenge.range_velocity_floor;
    expect(last).toBe(BASE * STEP ** Math.floor(Math.log2(spike)));
  });

  it('prices a flagged range and its spike of new numbers as two kinds', async () => {
    const { ask, clock, config } = gate({ flagged: true, rangeSends: 0, countrySends: 0 });
    const answers: Array<number | 'heard'> = [];
    // Past the range's velocity floor by one (a spike under two: no doubling).
    for (let i = 0; i <= config.challenge.range_velocity_floor; i++) {
      clock.now += 1000;
      const number = `+39312345${String(i).padStart(4, '0')}`;
      answers.push(await ask(`10.4.${i}.1`, { identifier: number, phone: number }));
    }
    expect(answers[0]).toBe(BASE);
    expect(answers[answers.length - 1]).toBe(BASE * STEP);
  });

  it("prices two signals of a client's wider network as one kind, and logs each signal once", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const { ask, config, clock } = gate(undefined, { lines });
    const { sends } = config.challenge.network_48;
    // A new /56 for each number: only the /48 sees them all, its identifiers first, then its sends too.
    let last: number | 'heard' = 'heard';
    for (let i = 0; i <= sends; i++) {
      // Five seconds apart: the country's new numbers stay under its velocity floor, no third kind.
      clock.now += 5000;
      last = await ask(`2001:db8:48:${(i * 0x100).toString(16)}::1`, { identifier: phone(i), phone: phone(i) });
    }
    expect(last).toBe(BASE);
    const challenged = lines.filter((line) => line.decision === 'challenged');
    expect(challenged[challenged.length - 1]!.signals).toEqual(['network_sends', 'network_identifiers']);
    // One client past its own identifiers: its signal once in the line.
    const ownLines: Array<Record<string, unknown>> = [];
    const mine = gate(undefined, { lines: ownLines });
    for (let i = 0; i <= config.challenge.client_identifiers; i++)
      await mine.ask('198.51.100.7', { identifier: phone(i), phone: phone(i) });
    expect(ownLines.filter((line) => line.decision === 'challenged').map((line) => line.signals)).toEqual([
      ['client_identifiers'],
    ]);
  });

  it("asks no password failures of a code request: an email's wrong passwords challenge its password logins only", async () => {
    const { challenge, ask, config } = gate();
    const email = 'mario.rossi@example.com';
    for (let i = 0; i < config.challenge.password_failures; i++) await challenge.passwordFailed('198.51.100.7', email);
    expect(await ask('203.0.113.9', { identifier: email, password: true })).toBe(BASE);
    expect(await ask('203.0.113.10', { identifier: email })).toBe('heard');
  });

  it("counts a client's wrong passwords on the client too, whichever emails it tries", async () => {
    const { challenge, ask, config } = gate();
    for (let i = 0; i < config.challenge.password_failures; i++)
      await challenge.passwordFailed('198.51.100.7', `person${i}@example.com`);
    expect(await ask('198.51.100.7', { identifier: 'someone.else@example.com', password: true })).toBe(BASE);
    expect(await ask('198.51.100.8', { identifier: 'someone.else@example.com', password: true })).toBe('heard');
  });

  it('remembers a refused client for refusal_seconds, then hears it again', async () => {
    const { challenge, ask, clock, named } = gate();
    await challenge.refused('198.51.100.7');
    clock.now += 30_000;
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE);
    expect(named).toEqual(['client_refused']);
    clock.now += 31_000;
    expect(await ask('198.51.100.7', { identifier: phone(2), phone: phone(2) })).toBe('heard');
  });

  it('challenges a client past its identifiers for one it named before too', async () => {
    const { ask, config } = gate();
    const ids = config.challenge.client_identifiers;
    for (let i = 0; i < ids; i++)
      expect(await ask('198.51.100.7', { identifier: phone(i), phone: phone(i) })).toBe('heard');
    expect(await ask('198.51.100.7', { identifier: phone(ids), phone: phone(ids) })).toBe(BASE);
    expect(await ask('198.51.100.7', { identifier: phone(0), phone: phone(0) })).toBe(BASE);
  });

  it('hears a new number where no place is known to count its velocity', async () => {
    const { ask, named } = gate(undefined, { places: false });
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe('heard');
    expect(named).toEqual([]);
  });

  it("names 'always' in always mode, and logs each decision with its signals, never the identifier", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const { ask, named } = gate(undefined, { mode: 'always', lines });
    expect(await ask('198.51.100.7', { identifier: phone(1), phone: phone(1) })).toBe(BASE);
    expect(named).toEqual(['always']);
    expect(lines).toEqual([
      expect.objectContaining({
        event: 'challenge',
        decision: 'challenged',
        signal: 'always',
        action: 'otp_generate',
        signals: ['always'],
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(phone(1).slice(1));
  });
});
