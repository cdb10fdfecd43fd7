import nock from 'nock';
import pino from 'pino';
import { createSmsServices } from '../../../src/domain/sms';
import { createMetrics } from '../../../src/core/metrics';
import { isApiError } from '../../../src/core/errors';
import { testConfig } from '../../support/app';
import { testCtx } from '../../support/context';
import { useNock } from '../../support/nock';
import { freePort } from '../../support/ports';

/*
 * Two real provider clients (the contract's gateway and Twilio) against nock: a provider that
 * gives no answer, times out or answers 5xx is skipped for the next, and exactly one provider
 * accepts each message.
 */

const log = pino({ level: 'silent' });
const SID = 'AC0123456789abcdef0123456789abcdef';
const twilioPath = `/2010-04-01/Accounts/${SID}/Messages.json`;
const TO = '+393331234567';

const twoProviders = (over: Record<string, unknown> = {}) =>
  testConfig({
    sms: {
      timeout_seconds: 1,
      providers: [
        { kind: 'gateway', api_url: 'https://gw.example.test/send', api_key: 'gw-key', sender: 'Login' },
        {
          kind: 'twilio',
          account_sid: SID,
          auth_token: 'tok',
          from: '+15005550006',
          api_url: 'https://twilio.example.test',
        },
      ],
      receipts: { callback_base_url: 'https://login.example.com' },
      ...over,
    },
  });

function services(config = twoProviders(), clock = { now: 1_700_000_000_000 }) {
  const metrics = createMetrics();
  const sms = createSmsServices(config, {
    log,
    now: () => clock.now,
    secret: 's',
    history: { has: async () => false },
    metrics,
    random: () => 0,
  });
  return { sms, metrics, clock };
}

describe('SMS providers: routing, failover and circuit breakers', () => {
  useNock();

  it('keeps the single gateway of sms.api_url when sms.providers is empty', async () => {
    const scope = nock('https://sms.example.test', { reqheaders: { authorization: 'Bearer k' } })
      .post('/v1/send', { receiver: TO, body: 'hi', sender: 'S' })
      .reply(200, {});
    const { sms } = services(
      testConfig({ sms: { api_url: 'https://sms.example.test/v1/send', api_key: 'k', sender: 'S' } }),
    );
    expect(sms.router.providers.map((p) => p.name)).toEqual(['gateway']);
    expect(await sms.router.send(testCtx, { to: TO, body: 'hi' })).toMatchObject({ provider: 'gateway', status: 200 });
    expect(scope.isDone()).toBe(true);
  });

  it.each([
    ['a 5xx', (s: nock.Interceptor) => s.reply(503, 'down')],
    [
      'a refused connection',
      (s: nock.Interceptor) => s.replyWithError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }),
    ],
    ['a timeout', (s: nock.Interceptor) => s.delay(1500).reply(200, {})],
  ])('passes the message to the next provider after %s, and only one accepts it', async (_name, fail) => {
    const gateway = fail(nock('https://gw.example.test').post('/send'));
    const twilio = nock('https://twilio.example.test')
      .post(
        twilioPath,
        (body: Record<string, string>) =>
          body.To === TO &&
          body.Body === 'code 123456' &&
          body.StatusCallback?.startsWith('https://login.example.com/_sms/receipts/twilio?m=') === true,
      )
      .once()
      .reply(201, { sid: 'SM1', status: 'queued' });
    const { sms, metrics } = services();
    const sent = await sms.router.send(testCtx, { to: TO, body: 'code 123456' });
    expect(sent).toMatchObject({ provider: 'twilio', messageId: 'SM1' });
    expect(gateway.isDone() && twilio.isDone()).toBe(true);
    const entries = await sms.ledger.since(0);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      provider: 'twilio',
      country: 'IT',
      number_type: 'MOBILE',
      range: '393331',
      message_id: 'SM1',
    });
    expect(JSON.stringify(entries)).not.toContain('3331234567');
    const text = await metrics.render();
    expect(text).toMatch(/lfa_sms_sends_total\{provider="gateway",channel="sms",country="IT",result="failover"\} 1/);
    expect(text).toMatch(/lfa_sms_sends_total\{provider="twilio",channel="sms",country="IT",result="accepted"\} 1/);
  });

  it('passes the message on when nothing listens at the first provider (a real refused connection)', async () => {
    const closed = await freePort();
    const config = twoProviders({
      providers: [
        { kind: 'gateway', api_url: `http://127.0.0.1:${closed}/send`, api_key: 'k' },
        {
          kind: 'twilio',
          account_sid: SID,
          auth_token: 'tok',
          from: '+15005550006',
          api_url: 'https://twilio.example.test',
        },
      ],
    });
    const twilio = nock('https://twilio.example.test').post(twilioPath).reply(201, { sid: 'SM9' });
    const { sms } = services(config);
    expect(await sms.router.send(testCtx, { to: TO, body: 'x' })).toMatchObject({
      provider: 'twilio',
      messageId: 'SM9',
    });
    expect(twilio.isDone()).toBe(true);
  });

  it('does not ask another provider when one refused the message (4xx): another would be asked the same', async () => {
    nock('https://gw.example.test').post('/send').reply(400, { error: 'bad receiver' });
    const twilio = nock('https://twilio.example.test').post(twilioPath).reply(201, { sid: 'SM1' });
    const { sms } = services();
    const failure = await sms.router.send(testCtx, { to: TO, body: 'x' }).catch((err: unknown) => err);
    expect(isApiError(failure) && failure.data.upstream_status).toBe(400);
    expect(twilio.isDone()).toBe(false);
    // Nothing went out: the ledger holds only the message not sent, refused by the provider that answered.
    expect(await sms.ledger.since(0)).toEqual([
      expect.objectContaining({
        provider: 'gateway',
        channel: 'sms',
        country: 'IT',
        not_sent: 'refused',
        recipient: '*********567',
      }),
    ]);
    expect(await sms.ledger.latest('+393331234567')).toBeNull();
  });

  it('opens the circuit after consecutive failures, skips the provider while open, and probes it once when half-open', async () => {
    const { sms, clock } = services(twoProviders({ breaker: { failures: 2, open_seconds: 30 } }));
    nock('https://gw.example.test').post('/send').times(2).reply(500);
    nock('https://twilio.example.test').post(twilioPath).times(3).reply(201, { sid: 'SM' });
    await sms.router.send(testCtx, { to: TO, body: 'a' });
    await sms.router.send(testCtx, { to: TO, body: 'b' });
    expect(sms.router.breakerStates()).toContainEqual(expect.objectContaining({ provider: 'gateway', state: 'open' }));
    // Open: the gateway is not asked at all (nock would refuse an unexpected call to it).
    expect(await sms.router.send(testCtx, { to: TO, body: 'c' })).toMatchObject({ provider: 'twilio' });

    clock.now += 30_000;
    expect(sms.router.breakerStates()).toContainEqual(
      expect.objectContaining({ provider: 'gateway', state: 'half_open' }),
    );
    const probe = nock('https://gw.example.test').post('/send').reply(200, {});
    expect(await sms.router.send(testCtx, { to: TO, body: 'd' })).toMatchObject({ provider: 'gateway' });
    expect(probe.isDone()).toBe(true);
    expect(sms.router.breakerStates()).toContainEqual(
      expect.objectContaining({ provider: 'gateway', state: 'closed' }),
    );
  });

  it("names WhatsApp, not SMS, when a WhatsApp-only country finds its provider's circuit open", async () => {
    const config = testConfig({
      sms: {
        timeout_seconds: 1,
        breaker: { failures: 1, open_seconds: 30 },
        providers: [
          {
            kind: 'whatsapp_cloud',
            name: 'meta',
            phone_number_id: '106540352242922',
            access_token: 'tok',
            template: 'otp_code',
            app_secret: 'meta-secret',
            verify_token: 'vt',
            api_url: 'https://graph.example.test',
          },
        ],
        channels: { IT: ['whatsapp'], default: ['whatsapp'] },
      },
    });
    const { sms } = services(config);
    nock('https://graph.example.test').post('/v21.0/106540352242922/messages').reply(503, 'down');
    const failures = [
      await sms.router.send(testCtx, { to: TO, body: 'a', channels: ['whatsapp'] }).catch((err: unknown) => err),
    ];
    // Open now: nothing is asked, and the refusal still names the channel.
    failures.push(
      await sms.router.send(testCtx, { to: TO, body: 'b', channels: ['whatsapp'] }).catch((err: unknown) => err),
    );
    for (const failure of failures) {
      expect(isApiError(failure) && failure.reason).toBe('upstream_error');
      expect((failure as Error).message).toBe('Servizio WhatsApp non disponibile. Riprova più tardi.');
    }
  });

  it('routes by destination country: a provider listed for other countries is never asked', async () => {
    const config = twoProviders({
      providers: [
        { kind: 'gateway', name: 'uk-only', api_url: 'https://gw.example.test/send', api_key: 'k', countries: ['gb'] },
        {
          kind: 'twilio',
          account_sid: SID,
          auth_token: 'tok',
          from: '+15005550006',
          api_url: 'https://twilio.example.test',
          countries: [],
        },
      ],
    });
    const twilio = nock('https://twilio.example.test').post(twilioPath).reply(201, { sid: 'SM' });
    const { sms } = services(config);
    expect(await sms.router.send(testCtx, { to: TO, body: 'x' })).toMatchObject({ provider: 'twilio' });
    expect(twilio.isDone()).toBe(true);
  });

  it('picks the first provider by weight; a weight of 0 is a backup only', async () => {
    const config = twoProviders({
      providers: [
        { kind: 'gateway', api_url: 'https://gw.example.test/send', api_key: 'k', weight: 0 },
        {
          kind: 'twilio',
          account_sid: SID,
          auth_token: 'tok',
          from: '+15005550006',
          api_url: 'https://twilio.example.test',
        },
      ],
    });
    nock('https://twilio.example.test').post(twilioPath).reply(201, { sid: 'SM' });
    const { sms } = services(config);
    expect(await sms.router.send(testCtx, { to: TO, body: 'x' })).toMatchObject({ provider: 'twilio' });
  });

  it('refuses two providers of one name', () => {
    expect(() => testConfig({ sms: { providers: [{ kind: 'gateway' }, { kind: 'gateway' }] } })).toThrow(/unique/);
  });

  it('reads the providers from one JSON variable of the environment', () => {
    const { loadConfig } = jest.requireActual<typeof import('../../../src/core/config/load')>(
      '../../../src/core/config/load',
    );
    const config = loadConfig({
      env: {
        NODE_ENV: 'test',
        SMS__PROVIDERS: JSON.stringify([{ kind: 'twilio', account_sid: SID, auth_token: 't', from: '+15005550006' }]),
      },
    });
    expect(config.sms.providers).toMatchObject([
      { kind: 'twilio', name: '', weight: 1, api_url: 'https://api.twilio.com' },
    ]);
  });
});
