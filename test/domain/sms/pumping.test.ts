import request from 'supertest';
import pino from 'pino';
import type { SmsProvider } from '../../../src/clients/sms';
import { createMetrics } from '../../../src/core/metrics';
import { createSmsServices } from '../../../src/domain/sms';
import { testApp, testConfig, testDeps } from '../../support/app';

/*
 * The pumping defence through otp_generate: every refusal has its stable reason, is counted
 * per reason and country, and costs no SMS; a range whose codes nobody verifies is blocked
 * after the minimum volume, until the cool-down ends or an operator lifts it.
 */

const KEY = 'ops-key-0123456789';

function setup(pumping: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const clock = { now: 1_900_000_000_000 };
  const config = testConfig({
    otp: { debug: true },
    server: { trust_proxy: true },
    security: { internal_key: KEY },
    sms: { allowed_regions: ['IT', 'GB'], pumping: { block_min_sends: 5, block_min_conversion: 0.5, block_window_seconds: 600, block_seconds: 900, ...pumping } },
    ...extra,
  });
  const sent: string[] = [];
  const provider: SmsProvider = { name: 'fake', kind: 'gateway', countries: [], weight: 1, receipts: false, configured: true, send: async (_ctx, m) => (sent.push(m.to), { status: 200, durationMs: 1 }) };
  const metrics = createMetrics();
  const log = pino({ level: 'silent' });
  const now = () => clock.now;
  const sms = createSmsServices(config, { log, now, secret: 's', metrics, providers: [provider] });
  const app = testApp(testDeps(config, { now, metrics, sms })).callback();
  let ip = 0;
  const generate = (phone: string) => request(app).post('/otp_generate').set('X-Forwarded-For', `10.0.${Math.floor(++ip / 250)}.${ip % 250}`).send({ uid: phone });
  const verify = (phone: string, code: string) => request(app).post('/verify_otp').set('X-Forwarded-For', '10.9.9.9').send({ email: phone, otp_code: code });
  return { clock, app, sent, metrics, generate, verify };
}

const botNumber = (i: number) => `+4475206${String(10000 + i).slice(-5)}`;

describe('SMS pumping defence', () => {
  it('blocks a range whose codes are not verified once it had the minimum volume, and spends nothing more on it', async () => {
    const { generate, sent, metrics } = setup();
    const answers = [];
    for (let i = 0; i < 12; i += 1) answers.push((await generate(botNumber(i))).body);
    expect(answers.slice(0, 5).every((a) => a.success)).toBe(true);
    expect(answers[5]).toMatchObject({ success: false, error: 'Invio SMS verso questa numerazione temporaneamente sospeso.', data: { reason: 'sms_destination_blocked' } });
    expect(answers.slice(5).every((a) => a.data.reason === 'sms_destination_blocked')).toBe(true);
    expect(sent).toHaveLength(5);
    expect(await metrics.render()).toMatch(/lfa_sms_refusals_total\{reason="sms_destination_blocked",country="GB"\} 7/);
  });

  it('does not block a range whose codes are verified', async () => {
    const { generate, verify, sent } = setup();
    for (let i = 0; i < 12; i += 1) {
      const answer = (await generate(botNumber(i))).body;
      expect(answer.success).toBe(true);
      if (i % 3 !== 0) await verify(botNumber(i), answer.data.otp);
    }
    expect(sent).toHaveLength(12);
  });

  it('refuses over the cap of a number prefix per hour with sms_destination_limited and when to retry', async () => {
    const { generate } = setup({ prefix_sends_per_hour: 3, block_min_sends: 100 });
    for (let i = 0; i < 3; i += 1) expect((await generate(botNumber(i))).body.success).toBe(true);
    const refused = (await generate(botNumber(3))).body;
    expect(refused.data).toMatchObject({ reason: 'sms_destination_limited', limit: 'prefix', retry_after: expect.any(Number) });
    // Another range of the same country is not capped by this one.
    expect((await generate('+447400123456')).body.success).toBe(true);
  });

  it('refuses over the cap of a country per hour', async () => {
    const { generate } = setup({ country_sends_per_hour: 2, block_min_sends: 100 });
    await generate('+447400123456');
    await generate('+447480123456');
    expect((await generate('+447400999999')).body.data).toMatchObject({ reason: 'sms_destination_limited', limit: 'country' });
    expect((await generate('+393331234567')).body.success).toBe(true);
  });

  it("does not let requests to a blocked range spend the country's cap that real people share", async () => {
    const { generate } = setup({ country_sends_per_hour: 10 });
    for (let i = 0; i < 40; i += 1) await generate(botNumber(i));
    expect((await generate('+447400123456')).body.success).toBe(true);
  });

  it('lifts a block after the cool-down', async () => {
    const { generate, clock } = setup();
    for (let i = 0; i < 6; i += 1) await generate(botNumber(i));
    expect((await generate(botNumber(50))).body.data.reason).toBe('sms_destination_blocked');
    clock.now += 901_000;
    // The cool-down is over and the old window (twice 600 s) is behind it: the range starts afresh.
    clock.now += 600_000;
    expect((await generate(botNumber(51))).body.success).toBe(true);
  });

  it('lets an operator lift a block, and does not block the range again for the sends that caused it', async () => {
    const { app, generate } = setup();
    for (let i = 0; i < 6; i += 1) await generate(botNumber(i));
    const report = (await request(app).get('/_sms/ledger').set('x-internal-key', KEY)).body.data;
    expect(report.blocks).toEqual([{ range: '447520', until: expect.any(String) }]);
    const lifted = await request(app).post('/_sms/blocks/lift').set('x-internal-key', KEY).send({ range: '447520' });
    expect(lifted.body.data).toEqual({ range: '447520', lifted: true });
    expect((await generate(botNumber(60))).body.success).toBe(true);
  });

  it('counts a refusal of a country outside the allow list with its reason', async () => {
    const { generate, metrics } = setup();
    expect((await generate('+33612345678')).body.data.reason).toBe('region_not_allowed');
    expect(await metrics.render()).toMatch(/lfa_sms_refusals_total\{reason="region_not_allowed",country="FR"\} 1/);
  });

  it('is off with the abuse limits (rate_limits.enabled false)', async () => {
    const { generate, sent } = setup({}, { rate_limits: { enabled: false } });
    for (let i = 0; i < 10; i += 1) await generate(botNumber(i));
    expect(sent).toHaveLength(10);
  });
});
