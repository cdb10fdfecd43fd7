import request from 'supertest';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { createRedisRateLimiter } from '../../src/domain/limits/redis-rate-limiter';
import { createRedisSmsStore } from '../../src/domain/sms/store';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { appWithRecordingSms } from '../support/fake-sms';
import { useRedis } from '../support/redis-server';

/*
 * Security round four's finding: a campaign of new numbers fills a country's hourly cap, and from
 * then on every phone of that country was refused, its established users included. The caps now
 * apply to new numbers: a phone that verified a code within `rate_limits.verified_history_days`
 * is still served, and its verified history (the one the bot challenge reads too) is a keyed
 * digest in the rate limiter's store, never the number. Run on Redis stores, where an operator
 * (or an attacker with a dump) would look.
 */

const HOUR = 3_600_000;
const COUNTRY_CAP = 12;
/** The sandbox's seeded account with a phone (Mario Rossi), as E.164 and as bare digits. */
const SEEDED = `+${sandboxSeedUsers.find((u) => u.custom.otp_phone)!.custom.otp_phone}`;
const SEEDED_DIGITS = SEEDED.slice(1);
/** New Italian numbers, each in its own range (so only the country cap can refuse them). */
const newNumber = (i: number) => `+39${320 + i}${String(1_000_000 + i).slice(-7)}`;

const { redis } = useRedis();

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((deps) => deps.close()));
});

function setup(
  pumping: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
  rateLimits: Record<string, unknown> = {},
) {
  const clock = { now: Math.floor(1_900_000_000_000 / HOUR) * HOUR + 60_000 };
  const config = testConfig({
    otp: { debug: true },
    server: { trust_proxy: true },
    sms: {
      allowed_regions: ['IT'],
      pumping: { country_sends_per_hour: COUNTRY_CAP, block_min_sends: 1000, ...pumping },
    },
    ...extra,
    rate_limits: { ...(extra.rate_limits as Record<string, unknown> | undefined), ...rateLimits },
  });
  const prefix = `safe${Math.random().toString(36).slice(2)}:`;
  const store = createRedisSmsStore(redis(), prefix);
  // The limits, and with them the verified history, under their own prefix: their counters name identifiers, the SMS store must not.
  const limitsPrefix = `safelimits${Math.random().toString(36).slice(2)}:`;
  const { app, deps, sent, lines, metrics } = appWithRecordingSms(config, {
    now: () => clock.now,
    store,
    rateLimiter: createRedisRateLimiter(redis(), limitsPrefix),
  });
  opened.push(deps);
  let ip = 0;
  const generate = (phone: string) =>
    request(app)
      .post('/otp_generate')
      .set('X-Forwarded-For', `10.1.${Math.floor(++ip / 250)}.${ip % 250}`)
      .send({ uid: phone });
  const verify = (phone: string, code: string) =>
    request(app).post('/verify_otp').set('X-Forwarded-For', '10.9.9.9').send({ email: phone, otp_code: code });
  return { clock, app, deps, sent, lines, metrics, generate, verify, prefix, limitsPrefix };
}

/** Every key under the prefix and every value it holds, whatever its type. */
async function dump(prefix: string): Promise<string> {
  const keys = await redis().keys(`${prefix}*`);
  const values = await Promise.all(
    keys.map(async (key) => {
      const type = await redis().type(key);
      if (type === 'string') return redis().get(key);
      if (type === 'hash') return JSON.stringify(await redis().hgetall(key));
      if (type === 'zset') return JSON.stringify(await redis().zrange(key, '0', '-1', 'WITHSCORES'));
      if (type === 'set') return JSON.stringify(await redis().smembers(key));
      throw new Error(`unexpected ${type} at ${key}`);
    }),
  );
  return JSON.stringify({ keys, values });
}

describe('the country cap, reached by new numbers, spares phones with a verified history', () => {
  it("still sends the seeded account's verified phone its code, refuses a new number, counts and logs the cap once, and stores no plain number", async () => {
    const { clock, deps, generate, verify, sent, lines, metrics, prefix, limitsPrefix } = setup();
    // Before the campaign, the starting series: the alert's increase() sees the first reaching.
    expect(await metrics.render()).toMatch(/lfa_sms_cap_reached_total\{scope="country",country="IT"\} 0/);

    // The seeded account signs in with its phone once: a verified history.
    const first = (await generate(SEEDED)).body;
    expect(first.success).toBe(true);
    expect((await verify(SEEDED, first.data.otp)).body.data.valid).toBe(true);
    await eventually(async () => expect(await deps.history.has(SEEDED)).toBe(true));

    // New numbers fill the country's cap (the seeded phone's code counted in it) and are then refused.
    const answers = [];
    for (let i = 0; i < COUNTRY_CAP + 3; i += 1) answers.push((await generate(newNumber(i))).body);
    expect(answers.filter((a) => a.success)).toHaveLength(COUNTRY_CAP - 1);
    for (const refused of answers.slice(COUNTRY_CAP - 1))
      expect(refused.data).toMatchObject({ reason: 'sms_destination_limited', limit: 'country' });

    // Past its own cooldown, in the same hour: the verified phone still gets its code, a new number still does not.
    clock.now += 120_000;
    const again = (await generate(SEEDED)).body;
    expect(again).toMatchObject({ success: true, data: { notified: { sms: true } } });
    expect(sent.filter((to) => to === SEEDED)).toHaveLength(2);
    expect((await generate(newNumber(50))).body.data).toMatchObject({
      reason: 'sms_destination_limited',
      limit: 'country',
    });

    // The cap was reached once this hour: counted once, logged once with what an operator can do, and no phone in the line.
    expect(await metrics.render()).toMatch(/lfa_sms_cap_reached_total\{scope="country",country="IT"\} 1\n/);
    const reached = lines.filter((l) => l.event === 'sms_cap_reached');
    expect(reached).toEqual([
      expect.objectContaining({
        scope: 'country',
        country: 'IT',
        cap: COUNTRY_CAP,
        advice: expect.stringContaining('sms.pumping.country_sends_per_hour'),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/3\d{9}/);

    // The rate limiter's store holds the one history (a digest that lives about verified_history_days), never the number.
    const history = await redis().keys(`${limitsPrefix}rl:challenge_verified:*`);
    expect(history).toHaveLength(1);
    expect(await redis().pttl(history[0]!)).toBeGreaterThan(89 * 86_400_000);
    const held = JSON.stringify({ history, values: await Promise.all(history.map((key) => redis().get(key))) });
    expect(held).not.toContain(SEEDED_DIGITS);
    expect(held).not.toContain(SEEDED_DIGITS.slice(2));
    // And the SMS store: no history of its own any more, no plain number either.
    expect(await redis().keys(`${prefix}sms:verified:*`)).toEqual([]);
    const stored = await dump(prefix);
    expect(stored).not.toContain(SEEDED_DIGITS);
    expect(stored).not.toContain(SEEDED_DIGITS.slice(2));
  });

  it('spares a verified phone a blocked range too, while new numbers in the range stay refused', async () => {
    const { clock, generate, verify, sent } = setup({
      block_min_sends: 5,
      block_min_conversion: 0.5,
      judge_after_seconds: 60,
    });
    const first = (await generate(SEEDED)).body;
    await verify(SEEDED, first.data.otp);
    clock.now += 1000;
    // Bots in the seeded phone's range (393331...), never verifying: watched, then blocked.
    const bot = (i: number) => `+393331${String(900_000 + i)}`;
    for (let i = 0; i < 6; i += 1) await generate(bot(i));
    clock.now += 61_000;
    await generate(bot(6));
    clock.now += 60_000;
    expect((await generate(bot(7))).body.data.reason).toBe('sms_destination_blocked');
    expect((await generate(SEEDED)).body.success).toBe(true);
    expect(sent.filter((to) => to === SEEDED)).toHaveLength(2);
    expect((await generate(bot(8))).body.data.reason).toBe('sms_destination_blocked');
  });

  it('keeps the per-phone cooldown and hourly cap for a verified phone, the country cap reached or not', async () => {
    const { clock, generate, verify } = setup({}, { rate_limits: { sends_per_identifier_per_hour: 3 } });
    const first = (await generate(SEEDED)).body;
    await verify(SEEDED, first.data.otp);
    for (let i = 0; i < COUNTRY_CAP; i += 1) await generate(newNumber(i));
    clock.now += 120_000;
    expect((await generate(SEEDED)).body.success).toBe(true);
    expect((await generate(SEEDED)).body.data.reason).toBe('already_sent');
    clock.now += 120_000;
    expect((await generate(SEEDED)).body.success).toBe(true);
    clock.now += 120_000;
    expect((await generate(SEEDED)).body.data.reason).toBe('rate_limited');
  });

  it('spares no one with verified_history_days 0', async () => {
    const { clock, deps, generate, verify } = setup({}, {}, { verified_history_days: 0 });
    const first = (await generate(SEEDED)).body;
    await verify(SEEDED, first.data.otp);
    for (let i = 0; i < COUNTRY_CAP; i += 1) await generate(newNumber(i));
    clock.now += 120_000;
    expect(await deps.history.has(SEEDED)).toBe(false);
    expect((await generate(SEEDED)).body.data).toMatchObject({ reason: 'sms_destination_limited', limit: 'country' });
  });
});
