import nock from 'nock';
import request from 'supertest';
import { redisReady } from '../../../src/core/redis';
import type { Deps } from '../../../src/domain/deps';
import { smsConfig, smsGateway, useNock } from '../../actions/otp/harness';
import { testApp, testConfig, testDeps } from '../../support/app';
import { startRedisServer, type RedisServer } from '../../support/redis-server';

/*
 * Two instances of the service sharing one Redis: the fleet behaves as one service. Neither
 * node can send a second code within the cooldown nor accept a code twice, a login started on
 * one finishes on the other, and an outage answers store_unavailable and heals by itself.
 */

const PHONE = '+393331234567';

describe('two instances on one Redis', () => {
  useNock();
  let server: RedisServer;
  const fleet: Deps[] = [];
  let nodes: Array<ReturnType<ReturnType<typeof testApp>['callback']>>;
  const post = (node: number, action: string, body: Record<string, unknown>) => request(nodes[node % 2]!).post(`/?action=${action}`).send(body);

  beforeAll(async () => {
    server = await startRedisServer();
  });
  beforeEach(async () => {
    const config = testConfig({ ...smsConfig, otp: { store: 'redis' }, redis: { url: server.url, key_prefix: `fleet${Math.random().toString(36).slice(2)}:` } });
    fleet.length = 0;
    fleet.push(testDeps(config), testDeps(config));
    await Promise.all(fleet.map((deps) => redisReady(deps.redis!)));
    nodes = fleet.map((deps) => testApp(deps).callback());
  });
  afterEach(async () => {
    await Promise.all(fleet.map((deps) => deps.close()));
  });
  afterAll(async () => {
    await server.stop();
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
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i, 'verify_otp', { email: PHONE, otp_code: code })));
    expect(answers.filter((a) => a.body.success)).toHaveLength(1);
    expect(answers.filter((a) => a.body.data?.reason === 'invalid')).toHaveLength(19);
  });

  it('finishes on one node a code sent by the other', async () => {
    const gateway = smsGateway();
    expect((await post(0, 'otp_generate', { uid: PHONE })).body.success).toBe(true);
    const verified = await post(1, 'verify_otp', { email: PHONE, otp_code: gateway.codes()[0] });
    expect(verified.body).toMatchObject({ success: true, data: { valid: true } });
  });

  it('answers store_unavailable and /readyz 503 while Redis is down, and recovers when it returns', async () => {
    smsGateway();
    await server.kill();
    const ready = await request(nodes[0]!).get('/readyz');
    expect(ready.status).toBe(503);
    const refused = await post(0, 'otp_generate', { uid: PHONE });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ success: false, data: { reason: 'store_unavailable' } });

    await server.restart();
    await Promise.all(fleet.map((deps) => redisReady(deps.redis!, 8_000)));
    expect((await request(nodes[0]!).get('/readyz')).status).toBe(200);
    expect((await post(1, 'otp_generate', { uid: PHONE })).body.success).toBe(true);
    nock.cleanAll();
  });
});
