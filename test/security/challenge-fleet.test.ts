import pino from 'pino';
import request from 'supertest';
import type { Deps } from '../../src/domain/deps';
import { redisReady } from '../../src/core/redis';
import { createSmsServices } from '../../src/domain/sms';
import { testApp, testConfig, testDeps } from '../support/app';
import { recordingSmsProvider } from '../support/fake-sms';
import { solvePow } from '../support/challenge';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * The bot challenge across a fleet: two instances sharing one redis-server. A solution is spent
 * once for the whole fleet (a replay on the other instance is refused), and the adaptive
 * signals add up across instances (a client cannot spread its identifiers over them).
 */

const phone = (n: number) => `+39333${String(n).padStart(7, '0')}`;

describe('the bot challenge on two instances sharing Redis', () => {
  let redis: RedisServer;
  const fleets: Deps[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const deps of fleets) await deps.close();
    await redis.stop();
  });

  async function fleet(mode: 'always' | 'adaptive', prefix: string) {
    const config = testConfig({
      otp: { store: 'redis', debug: true },
      sms: { allowed_regions: ['IT'] },
      redis: { url: redis.url, key_prefix: prefix },
      server: { trust_proxy_hops: 1 },
      challenge: { mode, pow_difficulty: 2000 },
    });
    const { provider, sent } = recordingSmsProvider();
    // Each its own numbers, never verified: no verified history to read.
    const instances = [0, 1].map(() =>
      testDeps(config, {
        sms: createSmsServices(config, {
          log: pino({ level: 'silent' }),
          now: Date.now,
          secret: 's',
          history: { has: async () => false },
          providers: [provider],
        }),
      }),
    );
    fleets.push(...instances);
    await Promise.all(instances.map((deps) => redisReady(deps.redis!)));
    const nodes = instances.map((deps) => testApp(deps).callback());
    const post = (node: number, action: string, body: Record<string, unknown>, ip = '203.0.113.7') =>
      request(nodes[node]!).post(`/${action}`).set('X-Forwarded-For', ip).send(body);
    return { post, sent };
  }

  it('refuses a solution replayed on the other instance, and on both at once', async () => {
    const { post, sent } = await fleet('always', 'fleet1:');
    const asked = (await post(0, 'otp_generate', { uid: phone(1) })).body;
    expect(asked.data.reason).toBe('challenge_required');
    const solution = await solvePow(asked.data.challenge);
    // The same solution on both instances at once: one send goes out.
    const both = await Promise.all([
      post(0, 'otp_generate', { uid: phone(1), challenge: solution }),
      post(1, 'otp_generate', { uid: phone(1), challenge: solution }),
    ]);
    expect(both.map((r) => r.body.success).sort()).toEqual([false, true]);
    expect(both.find((r) => !r.body.success)!.body.data.solution).toBe('spent');
    expect(sent).toEqual([phone(1)]);
    // And again later, on either.
    for (const node of [0, 1])
      expect((await post(node, 'otp_generate', { uid: phone(1), challenge: solution })).body.data.solution).toBe(
        'spent',
      );
    expect(sent).toHaveLength(1);
  });

  it('counts a spike of new numbers to one country across instances', async () => {
    const { post, sent } = await fleet('adaptive', 'fleet3:');
    const floor = testConfig({}).challenge.country_velocity_floor;
    const answers = [];
    // New numbers in many Italian ranges, each from a network of its own, alternating instances.
    for (let i = 0; i < floor + 5; i += 1)
      answers.push(
        (
          await post(
            i % 2,
            'otp_generate',
            { uid: `+393${100 + i}${String(i).padStart(6, '0')}` },
            `2001:db8:${(0x100 + i).toString(16)}::1`,
          )
        ).body,
      );
    expect(answers.slice(0, floor).every((a) => a.success)).toBe(true);
    expect(answers.slice(floor).map((a) => a.data?.reason)).toEqual(Array(5).fill('challenge_required'));
    expect(sent).toHaveLength(floor);
  });

  it("counts a client's identifiers across instances", async () => {
    const { post, sent } = await fleet('adaptive', 'fleet2:');
    const answers = [];
    for (let i = 0; i < 6; i += 1) answers.push((await post(i % 2, 'otp_generate', { uid: phone(10 + i) })).body);
    expect(answers.map((a) => a.success)).toEqual([true, true, true, false, false, false]);
    expect(answers[3].data.reason).toBe('challenge_required');
    expect(sent).toHaveLength(3);
  });
});
