import nock from 'nock';
import request from 'supertest';
import { redisReady } from '../../../src/core/redis';
import type { Deps } from '../../../src/domain/deps';
import { fixture, identityConfig, intercept, paths } from '../../actions/identity/support';
import { collector, COLLECTOR, COLLECTOR_TOKEN, MARIO, searchReply } from '../../actions/flows/support';
import { smsConfig, smsGateway, useNock } from '../../actions/otp/harness';
import { testApp, testDeps } from '../../support/app';
import { useRedisTargets } from '../../support/redis-targets';

/*
 * Two instances of the service sharing one Redis, or one Redis Cluster: the fleet behaves as
 * one service. Neither node can send a second code within the cooldown nor accept a code
 * twice, a login started on one finishes on the other, and an outage answers
 * store_unavailable and heals by itself.
 */

const PHONE = MARIO.phone;
const targets = useRedisTargets();

describe.each(targets)('two instances on $name', (target) => {
  useNock();
  const fleet: Deps[] = [];
  let nodes: Array<ReturnType<ReturnType<typeof testApp>['callback']>>;
  const post = (node: number, action: string, body: Record<string, unknown>) =>
    request(nodes[node % 2]!)
      .post(`/?action=${action}`)
      .send(body);

  beforeEach(async () => {
    const config = identityConfig({
      ...smsConfig,
      user_collector: { base_url: COLLECTOR, internal_token: COLLECTOR_TOKEN, max_retries: 0 },
      otp: { store: 'redis' },
      redis: { ...target.config(), key_prefix: `fleet${Math.random().toString(36).slice(2)}:` },
    });
    fleet.length = 0;
    fleet.push(testDeps(config), testDeps(config));
    // A cold cluster client learns the slots and connects to every master; on a loaded 2-core
    // runner that has taken more than the 5 s a start-up allows.
    await Promise.all(fleet.map((deps) => redisReady(deps.redis!, 15_000)));
    nodes = fleet.map((deps) => testApp(deps).callback());
  }, 30_000);
  afterEach(async () => {
    await Promise.all(fleet.map((deps) => deps.close()));
  });

  it('sends exactly one code for 20 concurrent requests spread over both nodes', async () => {
    const gateway = smsGateway();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i, 'otp_generate', { uid: PHONE })));
    expect(answers.filter((a) => a.body.success)).toHaveLength(1);
    expect(answers.filter((a) => a.body.data?.reason === 'already_sent')).toHaveLength(19);
    expect(gateway.sent).toHaveLength(1);
  });

  it('accepts exactly one of 20 concurrent correct verifications spread over both nodes', async () => {
    const gateway = smsGateway();
    await post(0, 'otp_generate', { uid: PHONE });
    const code = gateway.codes()[0];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i, 'verify_otp', { email: PHONE, otp_code: code })),
    );
    expect(answers.filter((a) => a.body.success)).toHaveLength(1);
    expect(answers.filter((a) => a.body.data?.reason === 'invalid')).toHaveLength(19);
  });

  it('finishes on one node a code sent by the other', async () => {
    const gateway = smsGateway();
    expect((await post(0, 'otp_generate', { uid: PHONE })).body.success).toBe(true);
    const verified = await post(1, 'verify_otp', { email: PHONE, otp_code: gateway.codes()[0] });
    expect(verified.body).toMatchObject({ success: true, data: { valid: true } });
  });

  it('logs in with FeLogin on one node and FeVerifyOtp on the other, the collector ingest delivered once', async () => {
    const gateway = smsGateway();
    const ingest = collector();
    intercept('POST', paths.search, 200, searchReply(MARIO));
    intercept('POST', paths.token, 200, fixture('token'));
    expect((await post(0, 'FeLogin', { identifier: PHONE })).body.data).toMatchObject({ next_step: 14, flow: 'phone' });
    const done = await post(1, 'FeVerifyOtp', { flow: 'phone', phone: PHONE, otp_code: gateway.codes()[0] });
    expect(done.body).toMatchObject({ success: true, data: { next_step: 90, done: true, uid: MARIO.uid } });
    // The answer on node 1 went out after its event was queued in Redis; either node may deliver it.
    expect((await Promise.all(fleet.map((deps) => deps.loginIngest.drain(5_000)))).every(Boolean)).toBe(true);
    expect(ingest.ingested).toEqual([
      { body: { uid: MARIO.uid, accessToken: done.body.data.access_token }, token: COLLECTOR_TOKEN },
    ]);
    // The code was spent by the login: a replay on the first node is refused.
    const replay = await post(0, 'FeVerifyOtp', { flow: 'phone', phone: PHONE, otp_code: gateway.codes()[0] });
    expect(replay.body).toMatchObject({ success: false, data: { reason: 'invalid' } });
  });

  it('answers store_unavailable and /readyz 503 while Redis is down, and recovers when it returns', async () => {
    smsGateway();
    await target.kill();
    const ready = await request(nodes[0]!).get('/readyz');
    expect(ready.status).toBe(503);
    const refused = await post(0, 'otp_generate', { uid: PHONE });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ success: false, data: { reason: 'store_unavailable' } });

    await target.restart();
    await Promise.all(fleet.map((deps) => redisReady(deps.redis!, 10_000)));
    expect((await request(nodes[0]!).get('/readyz')).status).toBe(200);
    expect((await post(1, 'otp_generate', { uid: PHONE })).body.success).toBe(true);
    nock.cleanAll();
  });
});
