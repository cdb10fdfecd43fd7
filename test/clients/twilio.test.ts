import nock from 'nock';
import pino from 'pino';
import { createTwilioProvider, twilioSignature } from '../../src/clients/twilio';
import type { SmsProviderConfig } from '../../src/core/config/schema';
import { isApiError } from '../../src/core/errors';
import { testConfig } from '../support/app';
import { testCtx } from '../support/context';
import { useNock } from '../support/nock';

const log = pino({ level: 'silent' });
const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-auth-token-1';
const provider = (over: Partial<Extract<SmsProviderConfig, { kind: 'twilio' }>> = {}) =>
  ({
    kind: 'twilio',
    name: 'twilio',
    countries: [],
    weight: 1,
    account_sid: SID,
    auth_token: TOKEN,
    from: '+15005550006',
    messaging_service_sid: '',
    api_url: 'https://api.twilio.com',
    ...over,
  }) as Extract<SmsProviderConfig, { kind: 'twilio' }>;
const config = testConfig();
const basic = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;
const messagesPath = `/2010-04-01/Accounts/${SID}/Messages.json`;

describe('Twilio Messages client', () => {
  useNock();

  it("signs as Twilio's documented example does (auth token 12345)", () => {
    const params = {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675309',
      Digits: '1234',
      From: '+14158675309',
      To: '+18005551212',
    };
    expect(twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', params)).toBe(
      'RSOYDt4T1cUTdK1PDd93/VVr8B8=',
    );
  });

  it('creates a Message: form-urlencoded To, From, Body and StatusCallback with HTTP Basic auth, and reads its sid', async () => {
    const scope = nock('https://api.twilio.com', {
      reqheaders: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    })
      .post(messagesPath, {
        To: '+393331234567',
        From: '+15005550006',
        Body: 'Codice 123456',
        StatusCallback: 'https://login.example.com/_sms/receipts/twilio?m=abc',
      })
      .reply(201, {
        sid: 'SM0123456789abcdef0123456789abcdef',
        status: 'queued',
        account_sid: SID,
        to: '+393331234567',
      });
    const sent = await createTwilioProvider(config, provider(), log).send(testCtx, {
      to: '+393331234567',
      body: 'Codice 123456',
      callbackUrl: 'https://login.example.com/_sms/receipts/twilio?m=abc',
    });
    expect(sent).toMatchObject({ status: 201, messageId: 'SM0123456789abcdef0123456789abcdef', provider: 'twilio' });
    expect(scope.isDone()).toBe(true);
  });

  it('sends through a Messaging Service when one is configured, without From', async () => {
    const scope = nock('https://api.twilio.com')
      .post(messagesPath, { To: '+393331234567', MessagingServiceSid: 'MG123', Body: 'x' })
      .reply(201, { sid: 'SM1' });
    await createTwilioProvider(config, provider({ messaging_service_sid: 'MG123' }), log).send(testCtx, {
      to: '+393331234567',
      body: 'x',
    });
    expect(scope.isDone()).toBe(true);
  });

  it("turns Twilio's error resource into upstream_error with the status", async () => {
    nock('https://api.twilio.com')
      .post(messagesPath)
      .reply(400, { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 });
    const failure = await createTwilioProvider(config, provider(), log)
      .send(testCtx, { to: '+393331234567', body: 'x' })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && failure.reason).toBe('upstream_error');
    expect(isApiError(failure) && failure.data.upstream_status).toBe(400);
  });

  describe('status callbacks', () => {
    const url = 'https://login.example.com/_sms/receipts/twilio?m=abc';
    const form = {
      AccountSid: SID,
      MessageSid: 'SM1',
      MessageStatus: 'delivered',
      To: '+393331234567',
      From: '+15005550006',
      ApiVersion: '2010-04-01',
      SmsSid: 'SM1',
      SmsStatus: 'delivered',
    };
    const request = (signature: string | undefined, body: Record<string, string> = form, at = url) => ({
      url: at,
      form: body,
      header: (name: string) => (name === 'x-twilio-signature' ? signature : undefined),
    });
    const twilio = createTwilioProvider(config, provider(), log);

    it('reads a signed receipt', () => {
      expect(twilio.receipt!(request(twilioSignature(TOKEN, url, form)))).toEqual({
        messageId: 'SM1',
        status: 'delivered',
      });
    });

    it('maps undelivered with its error code to failed, and sent to pending', () => {
      const failed = { ...form, MessageStatus: 'undelivered', ErrorCode: '30003' };
      expect(twilio.receipt!(request(twilioSignature(TOKEN, url, failed), failed))).toEqual({
        messageId: 'SM1',
        status: 'failed',
        errorCode: '30003',
      });
      const sent = { ...form, MessageStatus: 'sent' };
      expect(twilio.receipt!(request(twilioSignature(TOKEN, url, sent), sent))?.status).toBe('pending');
    });

    it('refuses a receipt without a signature, with a forged one, signed for another URL, or with a changed field', () => {
      expect(twilio.receipt!(request(undefined))).toBeNull();
      expect(twilio.receipt!(request('RSOYDt4T1cUTdK1PDd93/VVr8B8='))).toBeNull();
      expect(twilio.receipt!(request(twilioSignature('another-token', url, form)))).toBeNull();
      expect(twilio.receipt!(request(twilioSignature(TOKEN, `${url}x`, form)))).toBeNull();
      expect(
        twilio.receipt!(request(twilioSignature(TOKEN, url, form), { ...form, MessageStatus: 'failed' })),
      ).toBeNull();
    });

    it("refuses a receipt of another account, even signed with this one's token", () => {
      const other = { ...form, AccountSid: 'AC999' };
      expect(twilio.receipt!(request(twilioSignature(TOKEN, url, other), other))).toBeNull();
    });
  });
});
