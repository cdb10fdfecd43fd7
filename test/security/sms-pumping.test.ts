import request from 'supertest';
import pino from 'pino';
import type { SmsProvider } from '../../src/clients/sms';
import { createMetrics } from '../../src/core/metrics';
import { createSmsServices } from '../../src/domain/sms';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * An SMS pumping campaign against the default thresholds (docs/security.md, "SMS pumping"):
 * for one simulated hour, bots ask for codes to random numbers of one premium-looking mobile
 * range of one country (+44 7520 6xxxxx) at 12 a minute (720 an hour), each request from
 * another address so no per-IP or per-recipient limit stops them, and never verify. Real
 * people ask for codes at the same time, 6 a minute in Italy and 1 a minute in other British
 * ranges, and nine in ten verify 30 s later. The defence must block the bots' range within
 * the hour, spend fewer than 25 SMS on it, and refuse no one in any other range.
 */

const TICK_MS = 10_000;
const HOUR_MS = 3_600_000;
const BOT_RANGE = '447520';
const IT_PREFIXES = ['320', '328', '329', '333', '338', '339', '340', '345', '347', '348', '349', '366', '380', '388', '389', '391', '392', '393'];

/** A deterministic pseudo-random sequence: the same campaign on every run. */
function random(seed: number) {
  let state = seed;
  return () => ((state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
}

describe('an SMS pumping campaign mixed with real users', () => {
  it('is blocked within the hour, costs fewer than 25 SMS, and refuses no real user in other ranges', async () => {
    const clock = { now: Date.UTC(2030, 0, 7, 9, 0, 0) };
    const now = () => clock.now;
    const config = testConfig({ otp: { debug: true }, server: { trust_proxy: true }, security: { internal_key: 'ops-key-0123456789' }, sms: { allowed_regions: ['IT', 'GB'] } });
    const sent: string[] = [];
    const provider: SmsProvider = { name: 'fake', kind: 'gateway', countries: [], weight: 1, receipts: false, configured: true, send: async (_ctx, m) => (sent.push(m.to), { status: 200, durationMs: 1 }) };
    const metrics = createMetrics();
    const sms = createSmsServices(config, { log: pino({ level: 'silent' }), now, secret: 's', metrics, providers: [provider] });
    const app = testApp(testDeps(config, { now, metrics, sms })).callback();
    const rand = random(27);
    const digits = (n: number) => String(Math.floor(rand() * 10 ** n)).padStart(n, '0');
    let address = 0;
    const nextIp = () => `10.${(++address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`;
    const generate = (phone: string, ip: string) => request(app).post('/otp_generate').set('X-Forwarded-For', ip).send({ uid: phone });

    const pending: Array<{ at: number; phone: string; code: string; ip: string }> = [];
    const honest = { asked: 0, refused: [] as string[], verified: 0 };
    const bots = { asked: 0, smsSpent: 0, blockedAt: undefined as number | undefined };
    const start = clock.now;

    for (let tick = 0; tick < HOUR_MS / TICK_MS; tick += 1) {
      clock.now = start + tick * TICK_MS;
      for (let b = 0; b < 2; b += 1) {
        bots.asked += 1;
        const answer = (await generate(`+4475206${digits(5)}`, nextIp())).body;
        if (!answer.success && answer.data.reason === 'sms_destination_blocked' && bots.blockedAt === undefined) bots.blockedAt = clock.now - start;
      }
      const people = [`+39${IT_PREFIXES[Math.floor(rand() * IT_PREFIXES.length)]}${digits(7)}`];
      if (tick % 6 === 0) people.push(`+44${rand() < 0.5 ? '7400' : '7480'}${digits(6)}`);
      for (const phone of people) {
        const ip = nextIp();
        honest.asked += 1;
        const answer = (await generate(phone, ip)).body;
        if (!answer.success) honest.refused.push(`${phone}: ${answer.data.reason}`);
        else if (rand() < 0.9) pending.push({ at: clock.now + 30_000, phone, code: answer.data.otp, ip });
      }
      while (pending.length > 0 && pending[0]!.at <= clock.now + TICK_MS) {
        const person = pending.shift()!;
        const verified = (await request(app).post('/verify_otp').set('X-Forwarded-For', person.ip).send({ email: person.phone, otp_code: person.code })).body;
        if (verified.data?.valid) honest.verified += 1;
      }
    }
    bots.smsSpent = sent.filter((to) => to.startsWith(`+${BOT_RANGE}`)).length;

    expect(bots.blockedAt).toBeDefined();
    expect(bots.blockedAt!).toBeLessThan(HOUR_MS);
    expect(bots.smsSpent).toBeLessThan(25);
    expect(honest.refused).toEqual([]);
    expect(honest.verified).toBeGreaterThan(honest.asked * 0.8);
    const report = (await request(app).get('/_sms/ledger?since=7200').set('x-internal-key', 'ops-key-0123456789')).body.data;
    expect(report.blocks).toEqual([{ range: BOT_RANGE, until: expect.any(String) }]);
    expect(report.totals.find((g: { country: string }) => g.country === 'GB').sent).toBeLessThan(25 + 60);
    if (process.env.PUMPING_REPORT) console.log(JSON.stringify({ bots: { ...bots, blockedAfterSeconds: bots.blockedAt! / 1000 }, honest: { asked: honest.asked, verified: honest.verified, refused: honest.refused.length }, smsTotal: sent.length }));
  }, 120_000);
});
