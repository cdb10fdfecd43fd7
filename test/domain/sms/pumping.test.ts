import request from 'supertest';
import { testConfig } from '../../support/app';
import { appWithRecordingSms } from '../../support/fake-sms';

/*
 * The pumping defence through otp_generate: every refusal has its stable reason, is counted
 * per reason and country, and costs no SMS. A range is judged only on codes past the grace
 * (`judge_after_seconds`), when their outcome is known: a first finding puts it on watch (a lower
 * cap), a finding one grace later blocks it, until the cool-down ends, its codes are verified
 * late, or an operator lifts it.
 */

const KEY = 'ops-key-0123456789';
const GRACE_MS = 60_000;

function setup(pumping: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const clock = { now: 1_900_000_000_000, providerMs: 0 };
  const config = testConfig({
    otp: { debug: true },
    server: { trust_proxy: true },
    security: { internal_key: KEY },
    sms: {
      allowed_regions: ['IT', 'GB'],
      pumping: {
        block_min_sends: 5,
        block_min_conversion: 0.5,
        block_window_seconds: 600,
        block_seconds: 900,
        judge_after_seconds: GRACE_MS / 1000,
        ...pumping,
      },
    },
    ...extra,
  });
  const now = () => clock.now;
  const { app, deps, metrics, sent, lines } = appWithRecordingSms(config, {
    now,
    // The provider's time to accept a message: the clock moves while it answers.
    onSend: () => void (clock.now += clock.providerMs),
  });
  const { sms } = deps;
  let ip = 0;
  const generate = (phone: string) =>
    request(app)
      .post('/otp_generate')
      .set('X-Forwarded-For', `10.0.${Math.floor(++ip / 250)}.${ip % 250}`)
      .send({ uid: phone });
  const verify = (phone: string, code: string) =>
    request(app).post('/verify_otp').set('X-Forwarded-For', '10.9.9.9').send({ email: phone, otp_code: code });
  const events = () => lines.map((l) => l.event).filter((e) => typeof e === 'string' && e.startsWith('sms_range'));
  /** Bots ask for five codes and never verify; one grace later the range is watched, one more and it is blocked. */
  const blockBots = async () => {
    for (let i = 0; i < 5; i += 1) await generate(botNumber(i));
    clock.now += GRACE_MS + 1000;
    const watched = (await generate(botNumber(5))).body;
    clock.now += GRACE_MS;
    const blocked = (await generate(botNumber(6))).body;
    return { watched, blocked };
  };
  return { clock, app, sent, metrics, generate, verify, events, blockBots, sms };
}

const botNumber = (i: number) => `+4475206${String(10000 + i).slice(-5)}`;

describe('SMS pumping defence', () => {
  it('says a range is flagged once watched, counts its SMS this hour,, and blocks it one grace later though no code was sent since (the bots could not solve a challenge)', async () => {
    const { generate, clock, sms, events } = setup();
    for (let i = 0; i < 5; i += 1) await generate(botNumber(i));
    expect(await sms.pumping.destination(botNumber(9), 'GB')).toEqual({
      flagged: false,
      rangeSends: 5,
      countrySends: 5,
    });
    clock.now += GRACE_MS + 1000;
    expect((await sms.pumping.destination(botNumber(9), 'GB')).flagged).toBe(true);
    expect(events()).toEqual(['sms_range_watched']);
    clock.now += GRACE_MS;
    expect((await sms.pumping.destination(botNumber(9), 'GB')).flagged).toBe(true);
    expect(events()).toEqual(['sms_range_watched', 'sms_range_blocked']);
    expect((await sms.pumping.blocks()).map((b) => b.range)).toEqual(['447520']);
    // Another range: not flagged; the country's five SMS are counted for it, the range's for none.
    expect(await sms.pumping.destination('+447400123456', 'GB')).toEqual({
      flagged: false,
      rangeSends: 0,
      countrySends: 5,
    });
  });

  it('judges no code seconds old: 30 codes to one range in a burst, none verified yet, are all sent', async () => {
    const { generate, sent, events } = setup();
    for (let i = 0; i < 30; i += 1) expect((await generate(botNumber(i))).body.success).toBe(true);
    expect(sent).toHaveLength(30);
    expect(events()).toEqual([]);
  });

  it('puts a range whose codes are not verified on watch once they are judged, blocks it one grace later, and spends nothing more on it', async () => {
    const { generate, clock, sent, metrics, events } = setup({ watch_sends_per_hour: 7 });
    for (let i = 0; i < 5; i += 1) expect((await generate(botNumber(i))).body.success).toBe(true);
    // Not judged yet: the codes are younger than the grace.
    clock.now += GRACE_MS - 1000;
    expect((await generate(botNumber(5))).body.success).toBe(true);
    expect(events()).toEqual([]);
    // Judged: five codes, none verified. On watch: the range's cap is 7 an hour, not 60.
    clock.now += 2000;
    expect((await generate(botNumber(6))).body.success).toBe(true);
    expect(events()).toEqual(['sms_range_watched']);
    const capped = (await generate(botNumber(7))).body;
    expect(capped.data).toMatchObject({
      reason: 'sms_destination_limited',
      limit: 'watch',
      retry_after: expect.any(Number),
    });
    // One grace on watch and still no code verified: blocked.
    clock.now += GRACE_MS;
    const answers = [];
    for (let i = 8; i < 15; i += 1) answers.push((await generate(botNumber(i))).body);
    expect(answers.every((a) => a.data.reason === 'sms_destination_blocked')).toBe(true);
    expect(answers[0]).toMatchObject({
      success: false,
      error: 'Invio SMS verso questa numerazione temporaneamente sospeso.',
    });
    expect(events()).toEqual(['sms_range_watched', 'sms_range_blocked']);
    expect(sent).toHaveLength(7);
    const rendered = await metrics.render();
    expect(rendered).toMatch(/lfa_sms_refusals_total\{reason="sms_destination_blocked",country="GB"\} 7/);
    expect(rendered).toMatch(/lfa_sms_range_verdicts_total\{verdict="watched",country="GB"\} 1/);
    expect(rendered).toMatch(/lfa_sms_range_verdicts_total\{verdict="blocked",country="GB"\} 1/);
  });

  it('does not block a range whose codes are verified', async () => {
    const { generate, verify, sent, clock, events } = setup();
    for (let i = 0; i < 24; i += 1) {
      const answer = (await generate(botNumber(i))).body;
      expect(answer.success).toBe(true);
      if (i % 3 !== 0) await verify(botNumber(i), answer.data.otp);
      clock.now += 20_000;
    }
    expect(sent).toHaveLength(24);
    expect(events()).toEqual([]);
  });

  it('judges a code verified with its send, however long the provider took to accept it: a burst of people verifying at once is no finding', async () => {
    const { generate, verify, clock, events, sent } = setup();
    // Each send is counted when admitted, then the provider takes 1.5 s: its acceptance is a second later.
    clock.providerMs = 1500;
    for (let i = 0; i < 6; i += 1) {
      clock.now = 1_900_000_000_000 + i;
      const answer = (await generate(botNumber(i))).body;
      expect((await verify(botNumber(i), answer.data.otp)).body.data.valid).toBe(true);
    }
    // The burst's second is judged; the second its messages were accepted in is not yet.
    clock.now = 1_900_000_000_000 + GRACE_MS + 1000;
    clock.providerMs = 0;
    expect((await generate(botNumber(6))).body.success).toBe(true);
    expect(events()).toEqual([]);
    expect(sent).toHaveLength(7);
  });

  it('takes a range whose people verify slowly off watch when their codes are verified, without a block', async () => {
    const { generate, verify, clock, events, sent } = setup();
    const codes: Array<[string, string]> = [];
    for (let i = 0; i < 6; i += 1) codes.push([botNumber(i), (await generate(botNumber(i))).body.data.otp]);
    clock.now += GRACE_MS + 1000;
    expect((await generate(botNumber(6))).body.success).toBe(true);
    expect(events()).toEqual(['sms_range_watched']);
    // Verified 70 s after they were sent: late, but they count for when they were sent.
    clock.now += 10_000;
    for (const [phone, code] of codes) expect((await verify(phone, code)).body.data.valid).toBe(true);
    expect(events()).toEqual(['sms_range_watched', 'sms_range_cleared']);
    clock.now += GRACE_MS;
    for (let i = 7; i < 27; i += 1) expect((await generate(botNumber(i))).body.success).toBe(true);
    expect(sent).toHaveLength(27);
  });

  it("lifts a block at once when the range's codes are verified after it", async () => {
    const { generate, verify, clock, events, metrics } = setup();
    const codes: Array<[string, string]> = [];
    for (let i = 0; i < 6; i += 1) codes.push([botNumber(i), (await generate(botNumber(i))).body.data.otp]);
    clock.now += GRACE_MS + 1000;
    await generate(botNumber(6));
    clock.now += GRACE_MS;
    expect((await generate(botNumber(7))).body.data.reason).toBe('sms_destination_blocked');
    // Two of six verified: still under half, the block holds.
    for (const [phone, code] of codes.slice(0, 2)) await verify(phone, code);
    expect((await generate(botNumber(8))).body.data.reason).toBe('sms_destination_blocked');
    // Four of seven judged codes verified: over half, the block is lifted with that verification.
    for (const [phone, code] of codes.slice(2, 4)) await verify(phone, code);
    expect(events()).toEqual(['sms_range_watched', 'sms_range_blocked', 'sms_range_unblocked']);
    expect(await metrics.render()).toMatch(/lfa_sms_range_verdicts_total\{verdict="unblocked",country="GB"\} 1/);
    expect((await generate(botNumber(9))).body.success).toBe(true);
  });

  it('refuses over the cap of a number prefix per hour with sms_destination_limited and when to retry', async () => {
    const { generate } = setup({ prefix_sends_per_hour: 3, block_min_sends: 100 });
    for (let i = 0; i < 3; i += 1) expect((await generate(botNumber(i))).body.success).toBe(true);
    const refused = (await generate(botNumber(3))).body;
    expect(refused.data).toMatchObject({
      reason: 'sms_destination_limited',
      limit: 'prefix',
      retry_after: expect.any(Number),
    });
    // Another range of the same country is not capped by this one.
    expect((await generate('+447400123456')).body.success).toBe(true);
  });

  it('refuses over the cap of a country per hour', async () => {
    const { generate } = setup({ country_sends_per_hour: 2, block_min_sends: 100 });
    await generate('+447400123456');
    await generate('+447480123456');
    expect((await generate('+447400999999')).body.data).toMatchObject({
      reason: 'sms_destination_limited',
      limit: 'country',
    });
    expect((await generate('+393331234567')).body.success).toBe(true);
  });

  it("does not let requests to a blocked range spend the country's cap that real people share", async () => {
    const { generate, blockBots } = setup({ country_sends_per_hour: 10 });
    expect((await blockBots()).blocked.data.reason).toBe('sms_destination_blocked');
    for (let i = 0; i < 40; i += 1) await generate(botNumber(i));
    expect((await generate('+447400123456')).body.success).toBe(true);
  });

  it('lifts a block after the cool-down', async () => {
    const { generate, clock, blockBots } = setup();
    expect((await blockBots()).blocked.data.reason).toBe('sms_destination_blocked');
    clock.now += 901_000;
    // The cool-down is over and the old window (twice 600 s) is behind it: the range starts afresh.
    clock.now += 600_000;
    expect((await generate(botNumber(51))).body.success).toBe(true);
  });

  it('lets an operator lift a block, and does not block the range again for the sends that caused it', async () => {
    const { app, generate, clock, blockBots, events } = setup();
    expect((await blockBots()).blocked.data.reason).toBe('sms_destination_blocked');
    const report = (await request(app).get('/_sms/ledger').set('x-internal-key', KEY)).body.data;
    expect(report.blocks).toEqual([{ range: '447520', until: expect.any(String) }]);
    const lifted = await request(app).post('/_sms/blocks/lift').set('x-internal-key', KEY).send({ range: '447520' });
    expect(lifted.body.data).toEqual({ range: '447520', lifted: true });
    expect((await generate(botNumber(60))).body.success).toBe(true);
    clock.now += GRACE_MS + 1000;
    expect((await generate(botNumber(61))).body.success).toBe(true);
    expect(events()).toEqual(['sms_range_watched', 'sms_range_blocked', 'sms_range_unblocked']);
  });

  it('counts a refusal of a country outside the allow list with its reason', async () => {
    const { generate, metrics } = setup();
    expect((await generate('+33612345678')).body.data.reason).toBe('region_not_allowed');
    expect(await metrics.render()).toMatch(/lfa_sms_refusals_total\{reason="region_not_allowed",country="FR"\} 1/);
  });

  it('is off with the abuse limits (rate_limits.enabled false)', async () => {
    const { generate, sent, blockBots } = setup({}, { rate_limits: { enabled: false } });
    await blockBots();
    for (let i = 20; i < 30; i += 1) await generate(botNumber(i));
    expect(sent).toHaveLength(17);
  });
});
