import request from 'supertest';
import pino from 'pino';
import type { SmsProvider } from '../../src/clients/sms';
import { createMetrics } from '../../src/core/metrics';
import { createSmsServices } from '../../src/domain/sms';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * The SMS pumping campaign of sms-pumping.test.ts again, with the bot challenge in `adaptive`
 * mode at its default thresholds (docs/security.md, "Bot challenge"): for one simulated hour,
 * bots ask for codes to random numbers of one premium-looking range (+44 7520 6xxxxx) at 12 a
 * minute, each from another address, and never verify nor solve a challenge; real people ask
 * at the same time, 6 a minute in Italy and 1 a minute in other British ranges, each from their
 * own address, and nine in ten verify 30 s later. Once the pumping defence watches the range,
 * every bot request is challenged and no SMS goes there; the range is blocked one grace later
 * though the bots stopped costing SMS; fewer than 1 % of honest requests are challenged.
 * PUMPING_REPORT=1 prints the figures docs/security.md quotes.
 */

const TICK_MS = 10_000;
const HOUR_MS = 3_600_000;
const BOT_RANGE = '447520';
const IT_PREFIXES = ['320', '328', '329', '333', '338', '339', '340', '345', '347', '348', '349', '366', '380', '388', '389', '391', '392', '393'];

function random(seed: number) {
  let state = seed;
  return () => ((state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
}

describe('an SMS pumping campaign mixed with real users, with the bot challenge adaptive', () => {
  it('sends the bots no SMS once their range is watched, blocks it, and challenges under 1 % of real users', async () => {
    const clock = { now: Date.UTC(2030, 0, 7, 9, 0, 0) };
    const now = () => clock.now;
    const config = testConfig({ otp: { debug: true }, server: { trust_proxy_hops: 1 }, challenge: { mode: 'adaptive' }, sms: { allowed_regions: ['IT', 'GB'] } });
    const sent: string[] = [];
    const provider: SmsProvider = { name: 'fake', kind: 'gateway', countries: [], weight: 1, receipts: false, configured: true, send: async (_ctx, m) => (sent.push(m.to), { status: 200, durationMs: 1 }) };
    const metrics = createMetrics();
    const sms = createSmsServices(config, { log: pino({ level: 'silent' }), now, secret: 's', metrics, providers: [provider] });
    const deps = testDeps(config, { now, metrics, sms });
    const app = testApp(deps).callback();
    const rand = random(27);
    const digits = (n: number) => String(Math.floor(rand() * 10 ** n)).padStart(n, '0');
    let address = 0;
    const nextIp = () => `10.${(++address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`;
    const generate = (phone: string, ip: string) => request(app).post('/otp_generate').set('X-Forwarded-For', ip).send({ uid: phone });

    const pending: Array<{ at: number; phone: string; code: string; ip: string }> = [];
    const honest = { asked: 0, challenged: 0, refused: [] as string[], verified: 0 };
    const bots = { asked: 0, challenged: 0, smsBeforeChallenge: 0, smsAfterChallenge: 0, firstChallengeAt: undefined as number | undefined };
    const start = clock.now;
    const botSms = () => sent.filter((to) => to.startsWith(`+${BOT_RANGE}`)).length;

    for (let tick = 0; tick < HOUR_MS / TICK_MS; tick += 1) {
      clock.now = start + tick * TICK_MS;
      for (let b = 0; b < 2; b += 1) {
        bots.asked += 1;
        const before = botSms();
        const answer = (await generate(`+4475206${digits(5)}`, nextIp())).body;
        if (!answer.success && answer.data.reason === 'challenge_required') {
          bots.challenged += 1;
          bots.firstChallengeAt ??= clock.now - start;
        }
        if (bots.firstChallengeAt === undefined) bots.smsBeforeChallenge += botSms() - before;
        else bots.smsAfterChallenge += botSms() - before;
      }
      const people = [`+39${IT_PREFIXES[Math.floor(rand() * IT_PREFIXES.length)]}${digits(7)}`];
      if (tick % 6 === 0) people.push(`+44${rand() < 0.5 ? '7400' : '7480'}${digits(6)}`);
      for (const phone of people) {
        const ip = nextIp();
        honest.asked += 1;
        const answer = (await generate(phone, ip)).body;
        if (!answer.success && answer.data.reason === 'challenge_required') honest.challenged += 1;
        else if (!answer.success) honest.refused.push(`${phone}: ${answer.data.reason}`);
        else if (rand() < 0.9) pending.push({ at: clock.now + 30_000, phone, code: answer.data.otp, ip });
      }
      while (pending.length > 0 && pending[0]!.at <= clock.now + TICK_MS) {
        const person = pending.shift()!;
        const verified = (await request(app).post('/verify_otp').set('X-Forwarded-For', person.ip).send({ email: person.phone, otp_code: person.code })).body;
        if (verified.data?.valid) honest.verified += 1;
      }
    }
    const blocks = await deps.sms.pumping.blocks();

    expect(bots.firstChallengeAt).toBeDefined();
    expect(bots.smsAfterChallenge).toBe(0);
    expect(bots.smsBeforeChallenge).toBeLessThan(25);
    expect(blocks.map((b) => b.range)).toEqual([BOT_RANGE]);
    // Under 1 %: the people asked are those in a range past half its hourly cap (range_rate).
    expect(honest.challenged).toBeLessThan(honest.asked * 0.01);
    expect(honest.refused).toEqual([]);
    expect(honest.verified).toBeGreaterThan(honest.asked * 0.8);
    if (process.env.PUMPING_REPORT) {
      console.log(JSON.stringify({ bots: { ...bots, firstChallengeAfterSeconds: bots.firstChallengeAt! / 1000 }, honest: { asked: honest.asked, challenged: honest.challenged, verified: honest.verified }, smsTotal: sent.length }));
    }
  }, 120_000);
});
