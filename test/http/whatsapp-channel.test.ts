import nock from 'nock';
import request from 'supertest';
import { metaSignature } from '../../src/clients/whatsapp-cloud';
import { redisReady } from '../../src/core/redis';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * WhatsApp as a channel of a phone's code, end to end over the real app: Italy configured
 * [whatsapp, sms], Meta's Cloud API and the contract's SMS gateway behind nock. The code goes by
 * WhatsApp and the answer says so; a refusal falls back to SMS in the same request; a WhatsApp
 * message not read (or failed) by its receipt sends the phone's next code by SMS; forged
 * webhooks change nothing; one code is still one message per phone, whatever the channel.
 */

const TO = '+393331234567';
const KEY = 'operator-key-0123456789';
const SECRET = 'meta-app-secret';
const GRAPH = 'https://graph.example.test';
const MESSAGES = '/v21.0/106540352242922/messages';

function setup(sms: Record<string, unknown> = {}, store: Record<string, unknown> = {}) {
  const clock = { now: 1_900_000_000_000 };
  const config = testConfig({
    ...store,
    otp: { debug: true, resend_cooldown_seconds: 30, ...(store.otp as object) },
    security: { internal_key: KEY },
    sms: {
      api_url: 'https://sms.example.test/send',
      api_key: 'k',
      allowed_regions: ['IT', 'GB'],
      providers: [
        {
          kind: 'whatsapp_cloud',
          name: 'meta',
          phone_number_id: '106540352242922',
          access_token: 'tok',
          template: 'otp_code',
          app_secret: SECRET,
          verify_token: 'vt',
          api_url: GRAPH,
        },
        { kind: 'gateway', name: 'gateway' },
      ],
      channels: { IT: ['whatsapp', 'sms'], default: ['sms'] },
      receipts: { callback_base_url: 'https://login.example.com', timeout_seconds: 60 },
      ...sms,
    },
  });
  const deps = testDeps(config, { now: () => clock.now });
  const app = testApp(deps).callback();
  const sent = { whatsapp: [] as string[], sms: [] as string[] };
  const meta = (reply: [number, nock.Body] = [200, { messages: [{ id: `wamid.${sent.whatsapp.length + 1}` }] }]) =>
    nock(GRAPH)
      .post(
        MESSAGES,
        (body: { to: string; template: { components: Array<{ parameters: Array<{ text: string }> }> } }) => {
          sent.whatsapp.push(body.template.components[0]!.parameters[0]!.text);
          return body.to === TO.slice(1);
        },
      )
      .reply(...reply);
  const gateway = () =>
    nock('https://sms.example.test')
      .post('/send', (body: { receiver: string; body: string }) => {
        sent.sms.push(body.body);
        return true;
      })
      .reply(200, { id: 'g1' });
  const generate = (body: Record<string, unknown> = {}) =>
    request(app)
      .post('/?action=otp_generate')
      .send({ uid: TO, ...body });
  return { clock, deps, app, sent, meta, gateway, generate };
}

const webhook = (app: ReturnType<typeof setup>['app'], wamid: string, status: string, secret = SECRET) => {
  const raw = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { phone_number_id: '106540352242922' },
              statuses: [{ id: wamid, status, timestamp: '1', recipient_id: TO.slice(1) }],
            },
          },
        ],
      },
    ],
  });
  return request(app)
    .post('/_sms/receipts/meta')
    .set('content-type', 'application/json')
    .set('X-Hub-Signature-256', metaSignature(secret, raw))
    .send(raw);
};
const entries = async (app: ReturnType<typeof setup>['app']) =>
  (await request(app).get('/_sms/ledger').set('x-internal-key', KEY)).body.data.entries as Array<{
    channel: string;
    provider: string;
    state: string;
    read_at?: string;
  }>;

describe('codes by WhatsApp, with SMS behind it', () => {
  useNock();

  it('sends an Italian phone its code by WhatsApp, and the answer and the ledger say so', async () => {
    const { app, sent, meta, generate, deps } = setup();
    const scope = meta();
    const res = await generate();
    expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'whatsapp' });
    expect(res.body.data.fallback).toBeUndefined();
    expect(sent.whatsapp).toEqual([res.body.data.otp]);
    expect(sent.sms).toEqual([]);
    expect(scope.isDone()).toBe(true);
    expect(await entries(app)).toEqual([
      expect.objectContaining({ channel: 'whatsapp', provider: 'meta', state: 'waiting' }),
    ]);
    expect(await deps.metrics.render()).toMatch(
      /lfa_sms_sends_total\{provider="meta",channel="whatsapp",country="IT",result="accepted"\} 1/,
    );
  });

  it('sends a phone of a region configured [sms] by SMS', async () => {
    const { sent, gateway, generate } = setup();
    gateway();
    const res = await generate({ uid: '+447400123456' });
    expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
    expect(sent.whatsapp).toEqual([]);
  });

  it.each([
    [
      'not on WhatsApp (131026)',
      [400, { error: { message: 'Message undeliverable', type: 'OAuthException', code: 131026 } }],
    ],
    [
      'the template rejected (132001)',
      [400, { error: { message: 'Template name does not exist in the translation', code: 132001 } }],
    ],
    ['Meta down', [503, { error: { message: 'Service temporarily unavailable', code: 2 } }]],
  ] as const)(
    'falls back to SMS in the same request when WhatsApp refuses: %s; one SMS, the same code',
    async (_name, reply) => {
      const { sent, meta, gateway, generate } = setup();
      meta([reply[0], reply[1]]);
      gateway();
      const res = await generate();
      expect(res.body).toMatchObject({
        success: true,
        data: { notified: { sms: true, channel: 'sms' }, fallback: 'sms' },
      });
      expect(sent.whatsapp).toHaveLength(1);
      expect(sent.sms).toHaveLength(1);
      expect(sent.sms[0]).toContain(res.body.data.otp);
    },
  );

  it('skips WhatsApp while its circuit is open: straight to SMS, and says so', async () => {
    const { sent, meta, gateway, generate, clock } = setup({ breaker: { failures: 1, open_seconds: 300 } });
    meta([503, {}]);
    gateway();
    await generate();
    clock.now += 31_000;
    gateway();
    const res = await generate();
    expect(res.body.data).toMatchObject({ notified: { channel: 'sms' }, fallback: 'sms' });
    expect(sent.whatsapp).toHaveLength(1);
    expect(sent.sms).toHaveLength(2);
  });

  it('sends the next code by SMS when the WhatsApp message was delivered but not read within the receipts timeout', async () => {
    const { app, sent, meta, gateway, generate, clock } = setup();
    meta();
    await generate();
    expect((await webhook(app, 'wamid.1', 'delivered')).status).toBe(204);
    clock.now += 61_000;
    gateway();
    const res = await generate();
    expect(res.body.data).toMatchObject({ notified: { channel: 'sms' }, fallback: 'sms' });
    expect(sent.whatsapp).toHaveLength(1);
    expect(sent.sms).toHaveLength(1);
    // Its SMS is now the phone's last message: the one after it tries WhatsApp again.
    clock.now += 31_000;
    meta();
    expect((await generate()).body.data.notified.channel).toBe('whatsapp');
  });

  it('keeps WhatsApp when its message was read, and moves to SMS at once when its receipt says failed', async () => {
    const { app, meta, gateway, generate, clock } = setup();
    meta();
    await generate();
    expect((await webhook(app, 'wamid.1', 'read')).status).toBe(204);
    expect((await entries(app))[0]).toMatchObject({ state: 'delivered', read_at: expect.any(String) });
    clock.now += 61_000;
    meta();
    expect((await generate()).body.data.notified.channel).toBe('whatsapp');
    expect((await webhook(app, 'wamid.2', 'failed')).status).toBe(204);
    clock.now += 31_000;
    gateway();
    expect((await generate()).body.data).toMatchObject({ notified: { channel: 'sms' }, fallback: 'sms' });
  });

  it('refuses forged webhooks (403) and they change nothing: the next code still goes by WhatsApp', async () => {
    const { app, meta, generate, clock } = setup();
    meta();
    await generate();
    expect((await webhook(app, 'wamid.1', 'failed', 'guessed-secret')).status).toBe(403);
    const unsigned = await request(app)
      .post('/_sms/receipts/meta')
      .set('content-type', 'application/json')
      .send({ entry: [] });
    expect(unsigned.status).toBe(403);
    expect((await entries(app))[0]).toMatchObject({ state: 'waiting' });
    clock.now += 31_000;
    meta();
    expect((await generate()).body.data.notified.channel).toBe('whatsapp');
  });

  it("records a genuine webhook only for the message it names: another message id, another number's statuses, a form post change nothing", async () => {
    const { app, meta, generate } = setup();
    meta();
    await generate();
    expect((await webhook(app, 'wamid.not-ours', 'failed')).status).toBe(204);
    const otherNumber = JSON.stringify({
      entry: [
        {
          changes: [
            { value: { metadata: { phone_number_id: '999' }, statuses: [{ id: 'wamid.1', status: 'failed' }] } },
          ],
        },
      ],
    });
    expect(
      (
        await request(app)
          .post('/_sms/receipts/meta')
          .set('content-type', 'application/json')
          .set('X-Hub-Signature-256', metaSignature(SECRET, otherNumber))
          .send(otherNumber)
      ).status,
    ).toBe(204);
    const form = 'MessageSid=wamid.1&MessageStatus=failed';
    expect(
      (
        await request(app)
          .post('/_sms/receipts/meta')
          .type('form')
          .set('X-Hub-Signature-256', metaSignature(SECRET, form))
          .send(form)
      ).status,
    ).toBe(415);
    expect((await entries(app))[0]).toMatchObject({ channel: 'whatsapp', state: 'waiting' });
  });

  it("answers Meta's handshake with the challenge only for the verify token", async () => {
    const { app } = setup();
    const ok = await request(app)
      .get('/_sms/receipts/meta')
      .query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'vt', 'hub.challenge': '1158201444' });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('1158201444');
    const bad = await request(app)
      .get('/_sms/receipts/meta')
      .query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'vx', 'hub.challenge': '1' });
    expect(bad.status).toBe(403);
  });

  it('shows both channels in the ledger with their conversion per channel and country, on /sms beside the provider', async () => {
    const { app, meta, gateway, generate } = setup();
    meta();
    const first = await generate();
    await request(app).post('/?action=verify_otp').send({ uid: TO, otp_code: first.body.data.otp });
    await new Promise((resolve) => setImmediate(resolve));
    meta([400, { error: { code: 131026 } }]);
    gateway();
    await generate({ uid: '+393331234568' });
    const report = (await request(app).get('/_sms/ledger').set('x-internal-key', KEY)).body.data;
    expect(report.by_channel).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'whatsapp',
          country: 'IT',
          provider: '',
          sent: 1,
          verified: 1,
          conversion: 1,
        }),
        expect.objectContaining({ channel: 'sms', country: 'IT', provider: '', sent: 1, verified: 0, conversion: 0 }),
      ]),
    );
    expect(report.breakers).toEqual([
      expect.objectContaining({ provider: 'meta', channel: 'whatsapp' }),
      expect.objectContaining({ provider: 'gateway', channel: 'sms' }),
    ]);
    const page = (await request(app).get('/sms').set('x-internal-key', KEY)).text;
    expect(page).toMatch(/<tr><td>IT<\/td><td>meta<\/td><td>WhatsApp<\/td><td class="n">1<\/td>/);
    expect(page).toMatch(/<tr><td>IT<\/td><td>WhatsApp<\/td><td class="n">1<\/td>/);
  });

  it("counts WhatsApp codes in the pumping defence's range caps as SMS ones: the phone's range, whatever the channel", async () => {
    const { sent, meta, generate } = setup({ pumping: { prefix_digits: 9, prefix_sends_per_hour: 1 } });
    meta();
    expect((await generate()).body.data.notified.channel).toBe('whatsapp');
    const next = await generate({ uid: '+393331234568' });
    expect(next.body.data.reason).toBe('sms_destination_limited');
    expect(sent.whatsapp).toHaveLength(1);
  });

  describe('one code, one message, per phone whatever the channel', () => {
    it('refuses a second code through the other channel within the cooldown', async () => {
      const { sent, meta, generate } = setup({ channel_choice: true });
      meta();
      expect((await generate({ channel: 'whatsapp' })).body.success).toBe(true);
      expect((await generate({ channel: 'sms' })).body.data.reason).toBe('already_sent');
      // Another key sending to the same phone: still the phone's cooldown.
      expect((await generate({ uid: 'another-key', phone: '333 123 4567', channel: 'sms' })).body.data.reason).toBe(
        'already_sent',
      );
      expect(sent.whatsapp).toHaveLength(1);
      expect(sent.sms).toEqual([]);
    });

    it('a FeLogin asking for SMS after a WhatsApp code is refused the same way', async () => {
      const { app, sent, meta } = setup({ channel_choice: true });
      meta();
      const first = await request(app).post('/?action=FeLogin').send({ identifier: '333 123 4567' });
      expect(first.body.data).toMatchObject({ next_step: 14, otp: { notified: { channel: 'whatsapp' } } });
      const second = await request(app)
        .post('/?action=FeLogin')
        .send({ identifier: '+39 333 123 4567', channel: 'sms' });
      expect(second.body.data.reason).toBe('already_sent');
      expect(sent.whatsapp).toHaveLength(1);
      expect(sent.sms).toEqual([]);
    });
  });

  describe('the channel field', () => {
    it('lets the caller choose SMS where sms.channel_choice is on; the answer names it with no fallback', async () => {
      const { app, sent, gateway } = setup({ channel_choice: true });
      gateway();
      const res = await request(app).post('/?action=FeLogin').send({ identifier: '333 123 4567', channel: 'sms' });
      expect(res.body.data).toMatchObject({ next_step: 14, otp: { notified: { sms: true, channel: 'sms' } } });
      expect(res.body.data.otp.fallback).toBeUndefined();
      expect(sent.whatsapp).toEqual([]);
    });

    it.each([
      ['an unknown channel', { channel: 'telegram' }, { channel_choice: true }],
      ['a channel while sms.channel_choice is off', { channel: 'sms' }, {}],
      [
        "a channel the number's region does not offer",
        { uid: '+447400123456', channel: 'whatsapp' },
        { channel_choice: true },
      ],
      [
        'a channel for a code that goes by mail',
        { uid: 'mario@example.test', channel: 'whatsapp' },
        { channel_choice: true },
      ],
    ])('refuses %s as invalid_request naming channel, and sends nothing', async (_name, body, sms) => {
      const { sent, generate } = setup(sms);
      const res = await generate(body);
      expect(res.body.data.reason).toBe('invalid_request');
      expect(JSON.stringify(res.body.data.issues)).toContain('channel');
      expect(sent).toEqual({ whatsapp: [], sms: [] });
    });
  });
});

describe('codes by WhatsApp over Redis: the webhook finds its message by the index the ledger keeps there', () => {
  useNock();
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server.stop());

  it('marks the message failed by its Meta id and sends the next code by SMS', async () => {
    const { app, deps, meta, gateway, generate, clock } = setup(
      {},
      {
        otp: { store: 'redis', resend_cooldown_seconds: 1 },
        redis: { url: server.url, key_prefix: `wa${Date.now()}:` },
      },
    );
    try {
      await redisReady(deps.redis!, 15_000);
      meta();
      expect((await generate()).body.data.notified.channel).toBe('whatsapp');
      expect((await webhook(app, 'wamid.1', 'failed')).status).toBe(204);
      expect((await entries(app))[0]).toMatchObject({ channel: 'whatsapp', state: 'failed' });
      // Redis keeps the cooldown in its own time.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      clock.now += 1100;
      gateway();
      expect((await generate()).body.data).toMatchObject({ notified: { channel: 'sms' }, fallback: 'sms' });
    } finally {
      await deps.close();
    }
  });
});
