import nock from 'nock';
import pino from 'pino';
import { createTwilioProvider, twilioSignature } from '../../src/clients/twilio';
import { createWhatsAppCloudProvider, metaSignature } from '../../src/clients/whatsapp-cloud';
import type { SmsProviderConfig } from '../../src/core/config/schema';
import { isApiError } from '../../src/core/errors';
import { testConfig } from '../support/app';
import { testCtx } from '../support/context';
import { useNock } from '../support/nock';

const log = pino({ level: 'silent' });
const config = testConfig();
type Cloud = Extract<SmsProviderConfig, { kind: 'whatsapp_cloud' }>;
const SECRET = 'meta-app-secret-1';
const cloud = (over: Partial<Cloud> = {}): Cloud => ({
  kind: 'whatsapp_cloud',
  name: 'meta',
  countries: [],
  weight: 1,
  phone_number_id: '106540352242922',
  access_token: 'EAAJB-token',
  template: 'otp_code',
  language: '',
  app_secret: SECRET,
  verify_token: 'verify-me',
  api_url: 'https://graph.facebook.com',
  api_version: 'v21.0',
  ...over,
});

describe('WhatsApp Cloud API client (Meta)', () => {
  useNock();

  it('sends the authentication template: the code as body parameter and in the copy-code button, Bearer token, to without +', async () => {
    const scope = nock('https://graph.facebook.com', {
      reqheaders: { authorization: 'Bearer EAAJB-token', 'content-type': /application\/json/ },
    })
      .post('/v21.0/106540352242922/messages', {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '393331234567',
        type: 'template',
        template: {
          name: 'otp_code',
          language: { code: 'it' },
          components: [
            { type: 'body', parameters: [{ type: 'text', text: '123456' }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '123456' }] },
          ],
        },
      })
      .reply(200, {
        messaging_product: 'whatsapp',
        contacts: [{ input: '393331234567', wa_id: '393331234567' }],
        messages: [{ id: 'wamid.HBgLMzkzMzMxMjM0NTY3' }],
      });
    const sent = await createWhatsAppCloudProvider(config, cloud(), log).send(testCtx, {
      to: '+393331234567',
      body: 'Codice 123456',
      code: '123456',
      locale: 'it',
    });
    expect(sent).toMatchObject({ status: 200, messageId: 'wamid.HBgLMzkzMzMxMjM0NTY3', provider: 'meta' });
    expect(scope.isDone()).toBe(true);
  });

  it("uses the configured template language over the code's locale", async () => {
    const scope = nock('https://graph.facebook.com')
      .post(
        '/v21.0/106540352242922/messages',
        (body: { template: { language: { code: string } } }) => body.template.language.code === 'en_US',
      )
      .reply(200, { messages: [{ id: 'wamid.1' }] });
    await createWhatsAppCloudProvider(config, cloud({ language: 'en_US' }), log).send(testCtx, {
      to: '+393331234567',
      body: 'x',
      code: '1',
      locale: 'it',
    });
    expect(scope.isDone()).toBe(true);
  });

  it("turns Meta's error (not on WhatsApp, template rejected) into upstream_error with its status, which the router does not retry on WhatsApp", async () => {
    nock('https://graph.facebook.com')
      .post('/v21.0/106540352242922/messages')
      .reply(400, {
        error: { message: 'Message undeliverable', type: 'OAuthException', code: 131026, fbtrace_id: 'A' },
      });
    const failure = await createWhatsAppCloudProvider(config, cloud(), log)
      .send(testCtx, { to: '+393331234567', body: 'x', code: '1' })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && failure.data.upstream_status).toBe(400);
  });

  describe('webhook', () => {
    const provider = createWhatsAppCloudProvider(config, cloud(), log);
    const body = (status: string, phoneNumberId = '106540352242922', extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'WABA',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550001111', phone_number_id: phoneNumberId },
                  statuses: [
                    { id: 'wamid.1', status, timestamp: '1700000000', recipient_id: '393331234567', ...extra },
                  ],
                },
              },
            ],
          },
        ],
      });
    const request = (raw: string, signature: string | undefined) => ({
      url: 'https://login.example.com/_sms/receipts/meta',
      header: (name: string) => (name.toLowerCase() === 'x-hub-signature-256' ? signature : undefined),
      form: {},
      rawBody: raw,
    });

    it('reads sent, delivered, read and failed (with its error code) from a body signed with the app secret', () => {
      for (const [status, read] of [
        ['sent', 'pending'],
        ['delivered', 'delivered'],
        ['read', 'read'],
      ] as const) {
        expect(provider.webhook!(request(body(status), metaSignature(SECRET, body(status))))).toEqual([
          { messageId: 'wamid.1', status: read },
        ]);
      }
      const failed = body('failed', undefined, { errors: [{ code: 131026, title: 'Message undeliverable' }] });
      expect(provider.webhook!(request(failed, metaSignature(SECRET, failed)))).toEqual([
        { messageId: 'wamid.1', status: 'failed', errorCode: '131026' },
      ]);
    });

    it('refuses a forged body: no signature, another secret, a body changed after signing, sha1 instead of sha256', () => {
      const raw = body('read');
      expect(provider.webhook!(request(raw, undefined))).toBeNull();
      expect(provider.webhook!(request(raw, metaSignature('another-secret', raw)))).toBeNull();
      expect(provider.webhook!(request(body('failed'), metaSignature(SECRET, raw)))).toBeNull();
      expect(provider.webhook!(request(raw, metaSignature(SECRET, raw).replace('sha256=', 'sha1=')))).toBeNull();
      // Without an app secret nothing is authentic.
      expect(
        createWhatsAppCloudProvider(config, cloud({ app_secret: '' }), log).webhook!(
          request(raw, metaSignature('', raw)),
        ),
      ).toBeNull();
    });

    it('ignores the statuses of another phone-number id of the same app', () => {
      const raw = body('read', '999');
      expect(provider.webhook!(request(raw, metaSignature(SECRET, raw)))).toEqual([]);
    });

    it('answers the subscription handshake only with the verify token', () => {
      const query = (token: string, mode = 'subscribe') =>
        new URLSearchParams({ 'hub.mode': mode, 'hub.verify_token': token, 'hub.challenge': '1158201444' });
      expect(provider.handshake!(query('verify-me'))).toBe('1158201444');
      expect(provider.handshake!(query('verify-mx'))).toBeNull();
      expect(provider.handshake!(query('verify-me', 'unsubscribe'))).toBeNull();
      expect(createWhatsAppCloudProvider(config, cloud({ verify_token: '' }), log).handshake!(query(''))).toBeNull();
    });
  });
});

describe('Twilio WhatsApp client', () => {
  useNock();
  const SID = 'AC0123456789abcdef0123456789abcdef';
  const TOKEN = 'twilio-auth-token-1';
  const CONTENT = 'HX0123456789abcdef0123456789abcdef';
  const provider = (over: Partial<Extract<SmsProviderConfig, { kind: 'twilio_whatsapp' }>> = {}) =>
    ({
      kind: 'twilio_whatsapp',
      name: 'twilio-wa',
      countries: [],
      weight: 1,
      account_sid: SID,
      auth_token: TOKEN,
      from: '+15005550006',
      messaging_service_sid: '',
      content_sid: CONTENT,
      api_url: 'https://api.twilio.com',
      ...over,
    }) as Extract<SmsProviderConfig, { kind: 'twilio_whatsapp' }>;
  const basic = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;

  it('creates a Message between whatsapp: addresses with the Content Template and the code as variable 1, no Body', async () => {
    const scope = nock('https://api.twilio.com', {
      reqheaders: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    })
      .post(`/2010-04-01/Accounts/${SID}/Messages.json`, {
        To: 'whatsapp:+393331234567',
        From: 'whatsapp:+15005550006',
        ContentSid: CONTENT,
        ContentVariables: '{"1":"123456"}',
        StatusCallback: 'https://login.example.com/_sms/receipts/twilio-wa?m=abc',
      })
      .reply(201, { sid: 'MM0123456789abcdef0123456789abcdef', status: 'queued' });
    const sent = await createTwilioProvider(config, provider(), log).send(testCtx, {
      to: '+393331234567',
      body: 'Codice 123456',
      code: '123456',
      callbackUrl: 'https://login.example.com/_sms/receipts/twilio-wa?m=abc',
    });
    expect(sent).toMatchObject({ messageId: 'MM0123456789abcdef0123456789abcdef', provider: 'twilio-wa' });
    expect(scope.isDone()).toBe(true);
  });

  it('reads a signed read status as read', () => {
    const url = 'https://login.example.com/_sms/receipts/twilio-wa?m=abc';
    const form = { AccountSid: SID, MessageSid: 'MM1', MessageStatus: 'read', ChannelPrefix: 'whatsapp' };
    const twilio = createTwilioProvider(config, provider(), log);
    expect(twilio.channel).toBe('whatsapp');
    expect(
      twilio.receipt!({
        url,
        form,
        header: (name) => (name === 'x-twilio-signature' ? twilioSignature(TOKEN, url, form) : undefined),
      }),
    ).toEqual({ messageId: 'MM1', status: 'read' });
  });
});
