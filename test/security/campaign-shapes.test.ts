import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { IT_RANGES, networkApp, oneSlash48, random, runBot } from './network-campaigns';

/*
 * Each campaign shape of docs/security.md ("What each campaign gets") for one simulated hour
 * against the defaults, in process (network-campaigns.ts: addresses spoofed through the trusted
 * proxy header, a recording SMS provider, a fake clock). A bot never solves and never verifies;
 * the figures are the SMS it gets before its first challenge and after. CAMPAIGN_REPORT=1 prints
 * them as docs/security.md quotes them.
 */

// An hour's campaign is up to 1,800 requests through the whole app: seconds alone, a minute on
// cores shared with another test file. The budget is Jest's, not a verdict on speed.
jest.setTimeout(120_000);

const HOUR_MS = 3_600_000;
const report = (shape: string, figures: object) => {
  if (process.env.CAMPAIGN_REPORT) console.log(JSON.stringify({ shape, ...figures }));
};
const itNumber = (rand: () => number) =>
  `+${IT_RANGES[Math.floor(rand() * IT_RANGES.length)]!}${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`;

describe('what each campaign shape gets in an hour before it is challenged', () => {
  it('one /64 rotating its addresses, a new number each request: its third', async () => {
    const app = networkApp();
    const rand = random(1);
    const result = await runBot(app, {
      requests: 360,
      everyMs: 10_000,
      next: (i) => ({ phone: itNumber(rand), ip: `2001:db8:64:1:${(i + 1).toString(16)}::1` }),
    });
    report('one /64', result);
    expect(result.smsBeforeChallenge).toBe(app.config.challenge.client_identifiers);
    expect(result.smsAfterChallenge).toBe(0);
  });

  it('one /48 rotating its /64s every three requests over 900 Italian ranges: at most its identifiers', async () => {
    const app = networkApp();
    const result = await runBot(app, { requests: 1800, everyMs: 2_000, next: oneSlash48(5) });
    report('one /48, a new /64 every 3 requests, 1 request / 2 s', result);
    expect(result.smsBeforeChallenge).toBeLessThanOrEqual(app.config.challenge.network_48.identifiers);
    expect(result.smsAfterChallenge).toBe(0);
  });

  it("the finding's pace, a thousand in ten seconds from one /48: the same bound", async () => {
    const app = networkApp();
    const result = await runBot(app, { requests: 1000, everyMs: 10, next: oneSlash48(6) });
    report('one /48, a new /64 every 3 requests, 1000 in 10 s', result);
    expect(result.smsBeforeChallenge).toBeLessThanOrEqual(app.config.challenge.network_48.identifiers);
    expect(result.smsAfterChallenge).toBe(0);
  });

  it("many /48s, each kept under its budget, paced under the country's velocity floor: the country's volume signal", async () => {
    const app = networkApp();
    const rand = random(9);
    const perMinute = app.config.challenge.country_velocity_floor - 2;
    const below = app.config.challenge.network_48.identifiers - 1;
    const result = await runBot(app, {
      requests: Math.floor((HOUR_MS / 60_000) * perMinute),
      everyMs: Math.ceil(60_000 / perMinute),
      next: (i) => ({
        phone: itNumber(rand),
        ip: `2001:db8:${(0x1000 + Math.floor(i / below)).toString(16)}:${((i % 256) * 0x100).toString(16)}::1`,
      }),
    });
    report(`many /48s, ${below} requests each, ${perMinute} a minute`, result);
    // No velocity crosses: ranges watched by the pumping defence are challenged (range_flagged) while the others still
    // send, until the country reaches half its hourly cap (country_rate); from then on every request is asked.
    const countryRate = Math.ceil(
      app.config.challenge.destination_share * app.config.sms.pumping.country_sends_per_hour,
    );
    expect(result.sms).toBeLessThanOrEqual(countryRate);
    expect(result.signals).toHaveProperty('country_rate');
    expect(result.signals).not.toHaveProperty('country_velocity');
  });

  it("many /48s at the finding's pace, a thousand in ten seconds: the country's velocity", async () => {
    const app = networkApp();
    const rand = random(10);
    const result = await runBot(app, {
      requests: 1000,
      everyMs: 10,
      next: (i) => ({ phone: itNumber(rand), ip: `2001:db8:${(0x2000 + i).toString(16)}::1` }),
    });
    report('many /48s, a /48 per request, 1000 in 10 s', result);
    expect(result.smsBeforeChallenge).toBeLessThanOrEqual(app.config.challenge.country_velocity_floor);
    expect(result.firstChallengeAfterSeconds).toBeLessThan(2);
  });

  it("one new number of one range every 2 s, each from a new client address: the range's velocity floor", async () => {
    const app = networkApp();
    const rand = random(11);
    const result = await runBot(app, {
      requests: 1800,
      everyMs: 2_000,
      next: (i) => ({
        phone: `+393331${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`,
        ip: `10.${(i >> 8) & 255}.${i & 255}.${(i >> 16) & 255}`,
      }),
    });
    report('one range, a new number every 2 s, a new address each', result);
    expect(result.smsBeforeChallenge).toBeLessThanOrEqual(app.config.challenge.range_velocity_floor + 1);
    expect(result.smsAfterChallenge).toBe(0);
  });
});

describe('what honest people see', () => {
  it('thirty people behind one NAT address: the first three are not asked, the others solve one challenge at the base difficulty', async () => {
    const app = networkApp();
    const rand = random(12);
    let challenged = 0;
    let verified = 0;
    const counters: number[] = [];
    for (let i = 0; i < 30; i++) {
      app.clock.now += 120_000;
      const phone = itNumber(rand);
      const answer = await app.generate(phone, '203.0.113.30');
      if (!answer.success && answer.data.reason === 'challenge_required') {
        challenged += 1;
        const solution = await solveChallenge({ challenge: answer.data.challenge as never, deriveKey });
        counters.push(solution!.counter);
        continue;
      }
      if (answer.success && (await app.verify(phone, answer.data.otp!, '203.0.113.30'))) verified += 1;
    }
    report('one NAT address, 30 people in an hour', { challenged, verified, hardest: Math.max(...counters) });
    expect(verified).toBe(app.config.challenge.client_identifiers);
    expect(challenged).toBe(30 - app.config.challenge.client_identifiers);
    // The address's own signals only (client_identifiers, then client_sends too): the base difficulty.
    expect(Math.max(...counters)).toBeLessThanOrEqual(app.config.challenge.pow_difficulty);
  }, 120_000);

  it("a carrier's NAT /24 carrying 360 new people an hour, the Italian traffic of the pumping simulation: none asked", async () => {
    const app = networkApp();
    const rand = random(13);
    let challenged = 0;
    for (let i = 0; i < 360; i++) {
      app.clock.now += 10_000;
      const phone = itNumber(rand);
      const ip = `100.64.9.${Math.floor(rand() * 256)}`;
      // Each a person; two in three on their own address of the pool, the rest sharing one with another.
      const answer = await app.generate(phone, ip);
      if (!answer.success && answer.data.reason === 'challenge_required') challenged += 1;
      else if (answer.success && rand() < 0.9) await app.verify(phone, answer.data.otp!, ip);
    }
    report('one CGNAT /24, 360 new people in an hour', { challenged });
    // Only an address of the pool that carried a fourth person in the hour asks (client_identifiers), never the /24's own budget.
    expect(challenged).toBeLessThan(360 * 0.1);
    expect((await app.metrics.render()).match(/signal="network_\w+"\} [1-9]/)).toBeNull();
  }, 120_000);
});
