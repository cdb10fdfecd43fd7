import request from 'supertest';
import { deepMerge } from '../../src/core/config/load';
import { testConfig } from '../support/app';
import { appWithRecordingSms } from '../support/fake-sms';

/*
 * The SMS pumping campaign the pumping and bot-challenge simulations run against the default
 * thresholds (docs/security.md, "SMS pumping"): for one simulated hour, bots ask for codes to
 * random numbers of one premium-looking mobile range of one country (+44 7520 6xxxxx) at 12 a
 * minute (720 an hour), each request from another address so no per-IP or per-recipient limit
 * stops them, and never verify nor solve a challenge. Real people ask for codes at the same
 * time, 6 a minute in Italy and 1 a minute in other British ranges, each from their own address,
 * and nine in ten verify 30 s later. Each simulation watches the answers its own way.
 */

const TICK_MS = 10_000;
export const HOUR_MS = 3_600_000;
export const BOT_RANGE = '447520';
const IT_PREFIXES = [
  '320',
  '328',
  '329',
  '333',
  '338',
  '339',
  '340',
  '345',
  '347',
  '348',
  '349',
  '366',
  '380',
  '388',
  '389',
  '391',
  '392',
  '393',
];

/** A deterministic pseudo-random sequence: the same campaign on every run. */
function random(seed: number) {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}

interface Answer {
  success: boolean;
  data: { reason?: string; otp?: string };
}

export interface CampaignWatch {
  /** A bot's answer, `at` ms into the campaign, with the SMS it cost the bots' range. */
  bot(answer: Answer, at: number, sms: number): void;
  /** A person's answer; a success is verified 30 s later nine times in ten. */
  person(answer: Answer, phone: string): void;
}

export async function runPumpingCampaign(overrides: Parameters<typeof testConfig>[0], watch: CampaignWatch) {
  const clock = { now: Date.UTC(2030, 0, 7, 9, 0, 0) };
  const now = () => clock.now;
  const config = testConfig(
    deepMerge(
      { otp: { debug: true }, server: { trust_proxy_hops: 1 }, sms: { allowed_regions: ['IT', 'GB'] } },
      overrides ?? {},
    ),
  );
  const { app, deps, sent } = appWithRecordingSms(config, { now });
  const rand = random(27);
  const digits = (n: number) => String(Math.floor(rand() * 10 ** n)).padStart(n, '0');
  let address = 0;
  const nextIp = () => `10.${(++address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`;
  const generate = async (phone: string, ip: string): Promise<Answer> =>
    (await request(app).post('/otp_generate').set('X-Forwarded-For', ip).send({ uid: phone })).body;
  const botSms = () => sent.filter((to) => to.startsWith(`+${BOT_RANGE}`)).length;

  const pending: Array<{ at: number; phone: string; code: string; ip: string }> = [];
  const honest = { asked: 0, verified: 0 };
  const start = clock.now;
  for (let tick = 0; tick < HOUR_MS / TICK_MS; tick += 1) {
    clock.now = start + tick * TICK_MS;
    for (let b = 0; b < 2; b += 1) {
      const before = botSms();
      const answer = await generate(`+4475206${digits(5)}`, nextIp());
      watch.bot(answer, clock.now - start, botSms() - before);
    }
    const people = [`+39${IT_PREFIXES[Math.floor(rand() * IT_PREFIXES.length)]}${digits(7)}`];
    if (tick % 6 === 0) people.push(`+44${rand() < 0.5 ? '7400' : '7480'}${digits(6)}`);
    for (const phone of people) {
      const ip = nextIp();
      honest.asked += 1;
      const answer = await generate(phone, ip);
      watch.person(answer, phone);
      if (answer.success && rand() < 0.9) pending.push({ at: clock.now + 30_000, phone, code: answer.data.otp!, ip });
    }
    while (pending.length > 0 && pending[0]!.at <= clock.now + TICK_MS) {
      const person = pending.shift()!;
      const verified = (
        await request(app)
          .post('/verify_otp')
          .set('X-Forwarded-For', person.ip)
          .send({ email: person.phone, otp_code: person.code })
      ).body;
      if (verified.data?.valid) honest.verified += 1;
    }
  }
  return { app, deps, sent, honest, botSms: botSms() };
}
