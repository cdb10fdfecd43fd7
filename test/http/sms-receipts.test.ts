import nock from 'nock';
import request from 'supertest';
import { twilioSignature } from '../../src/clients/twilio';
import type { Mailer } from '../../src/clients/mailer';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';

/*
 * Delivery receipts end to end: otp_generate through a Twilio provider (nock) asks for a
 * status callback; the callback, signed as Twilio signs, marks the ledger entry; a forged one
 * is refused. A failed or missing receipt makes the next code for the phone go, once, to the
 * confirmed email of the account holding it, and the answer says so.
 */

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-token';
const TO = '+393331234567';
const KEY = 'operator-key-0123456789';
const twilioPath = `/2010-04-01/Accounts/${SID}/Messages.json`;

function setup() {
  const clock = { now: 1_900_000_000_000 };
  const config = testConfig({
    otp: { debug: true, resend_cooldown_seconds: 30 },
    identity: { base_url: 'https://idp.example.test', aid: 'aid', api_token: 'tok' },
    security: { internal_key: KEY },
    sms: {
      providers: [
        {
          kind: 'twilio',
          account_sid: SID,
          auth_token: TOKEN,
          from: '+15005550006',
          api_url: 'https://twilio.example.test',
        },
      ],
      receipts: { callback_base_url: 'https://login.example.com', timeout_seconds: 60 },
    },
  });
  const mails: string[] = [];
  const mailer: Mailer = {
    configured: true,
    send: async (_ctx, message) => {
      mails.push(message.to);
      return { messageId: 'm', durationMs: 1 };
    },
    close: async () => {},
  };
  const deps = testDeps(config, { now: () => clock.now, mailer });
  const app = testApp(deps).callback();
  const callbacks: string[] = [];
  const twilio = (sid: string) =>
    nock('https://twilio.example.test')
      .post(twilioPath, (body: Record<string, string>) => {
        callbacks.push(body.StatusCallback ?? '');
        return body.To === TO;
      })
      .reply(201, { sid, status: 'queued' });
  return { clock, deps, app, callbacks, twilio, mails };
}

/** Twilio's status callback for `sid`, posted to `url` and signed with `token`. */
function receipt(app: ReturnType<typeof setup>['app'], url: string, sid: string, status: string, token = TOKEN) {
  const form = {
    AccountSid: SID,
    MessageSid: sid,
    SmsSid: sid,
    MessageStatus: status,
    SmsStatus: status,
    To: TO,
    From: '+15005550006',
    ApiVersion: '2010-04-01',
    ...(status === 'undelivered' ? { ErrorCode: '30003' } : {}),
  };
  const path = url.replace('https://login.example.com', '');
  return request(app)
    .post(path)
    .type('form')
    .set('X-Twilio-Signature', twilioSignature(token, url, form))
    .send(form);
}

const ledger = (app: ReturnType<typeof setup>['app']) => request(app).get('/_sms/ledger').set('x-internal-key', KEY);

describe('SMS delivery receipts and the email fallback', () => {
  useNock();

  it('records a signed delivery receipt in the ledger', async () => {
    const { app, twilio, callbacks } = setup();
    twilio('SM1');
    const sent = await request(app).post('/?action=otp_generate').send({ uid: TO });
    expect(sent.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
    expect(callbacks[0]).toMatch(/^https:\/\/login\.example\.com\/_sms\/receipts\/twilio\?m=[\w-]+$/);

    expect((await receipt(app, callbacks[0]!, 'SM1', 'sent')).status).toBe(204);
    expect((await ledger(app)).body.data.entries[0].state).toBe('waiting');
    expect((await receipt(app, callbacks[0]!, 'SM1', 'delivered')).status).toBe(204);
    const report = (await ledger(app)).body.data;
    expect(report.entries[0]).toMatchObject({
      state: 'delivered',
      provider: 'twilio',
      country: 'IT',
      channel: 'sms',
      recipient: expect.not.stringContaining('1234567'),
    });
    expect(report.totals).toEqual([
      expect.objectContaining({ country: 'IT', provider: 'twilio', sent: 1, delivered: 1, verified: 0 }),
    ]);
  });

  it('refuses a forged receipt (wrong key, or a genuine one replayed for another message) and records nothing', async () => {
    const { app, twilio, callbacks } = setup();
    twilio('SM1');
    twilio('SM2');
    await request(app).post('/?action=otp_generate').send({ uid: TO });
    await request(app)
      .post('/?action=otp_generate')
      .send({ uid: '+393339876543' })
      .catch(() => undefined);
    expect((await receipt(app, callbacks[0]!, 'SM1', 'failed', 'not-the-token')).status).toBe(403);
    const unsigned = await request(app)
      .post(callbacks[0]!.replace('https://login.example.com', ''))
      .type('form')
      .send({ AccountSid: SID, MessageSid: 'SM1', MessageStatus: 'failed' });
    expect(unsigned.status).toBe(403);
    // Signed for the first message's URL, posted to the second's: the URL is part of the signature.
    const form = { AccountSid: SID, MessageSid: 'SM1', MessageStatus: 'failed' };
    const replayed = await request(app)
      .post(callbacks[1]!.replace('https://login.example.com', ''))
      .type('form')
      .set('X-Twilio-Signature', twilioSignature(TOKEN, callbacks[0]!, form))
      .send(form);
    expect(replayed.status).toBe(403);
    const states = (await ledger(app)).body.data.entries.map((e: { state: string }) => e.state);
    expect(states.every((s: string) => s === 'waiting')).toBe(true);
  });

  it('answers 404 for a provider it does not have and 415 for a receipt that is not a form', async () => {
    const { app } = setup();
    expect((await request(app).post('/_sms/receipts/nobody').type('form').send({ a: 'b' })).status).toBe(404);
    expect((await request(app).post('/_sms/receipts/twilio').send({ MessageSid: 'SM1' })).status).toBe(415);
  });

  it('shows the ledger and the page only to the internal key outside the sandbox', async () => {
    const { app } = setup();
    expect((await request(app).get('/_sms/ledger')).status).toBe(401);
    expect((await request(app).get('/sms')).status).toBe(401);
    expect((await request(app).post('/_sms/blocks/lift').send({ range: '393331' })).status).toBe(401);
    expect((await ledger(app)).status).toBe(200);
    const page = await request(app).get('/sms').set('x-internal-key', KEY);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.text).toContain('consegne e conversione');
  });

  function identityHolds(times = 1) {
    nock('https://idp.example.test')
      .post('/api/v3/publisher/user/search')
      .times(times)
      .reply(200, {
        code: 0,
        users: [
          {
            uid: 'u1',
            email: 'mario@example.com',
            custom_fields: [{ field_name: 'otp_phone', value: '393331234567' }],
          },
        ],
      });
    nock('https://idp.example.test')
      .post('/id/api/v1/publisher/users/get')
      .query(true)
      .times(times)
      .reply(200, { uid: 'u1', email: 'mario@example.com', email_confirmation_state: 'CONFIRMED' });
  }

  it('after a failed delivery, sends the next code also to the confirmed email of the account, once, and says so', async () => {
    const { app, twilio, callbacks, clock, mails } = setup();
    twilio('SM1');
    await request(app).post('/?action=otp_generate').send({ uid: TO });
    await receipt(app, callbacks[0]!, 'SM1', 'undelivered');
    expect((await ledger(app)).body.data.entries[0]).toMatchObject({ state: 'failed', error_code: '30003' });

    clock.now += 31_000;
    identityHolds();
    twilio('SM2');
    const again = await request(app).post('/?action=otp_generate').send({ uid: TO });
    expect(again.body.data).toMatchObject({ fallback: 'email', notified: { email: true, sms: true } });
    expect(mails).toEqual(['mario@example.com']);

    // The code proves the phone, as rule 2's pairing does.
    const verified = await request(app).post('/?action=verify_otp').send({ email: TO, otp_code: again.body.data.otp });
    expect(verified.body.data.valid).toBe(true);

    // That SMS arrived: the next code goes by SMS only.
    await receipt(app, callbacks[1]!, 'SM2', 'delivered');
    clock.now += 31_000;
    twilio('SM3');
    const third = await request(app).post('/?action=otp_generate').send({ uid: TO });
    expect(third.body.data.fallback).toBeUndefined();
    expect(third.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
    expect(mails).toHaveLength(1);
  });

  it("says so in FeLogin's answer too (data.otp.fallback)", async () => {
    const { app, twilio, callbacks, clock, mails } = setup();
    twilio('SM1');
    await request(app).post('/?action=otp_generate').send({ uid: TO });
    await receipt(app, callbacks[0]!, 'SM1', 'failed');
    clock.now += 31_000;
    identityHolds(2);
    twilio('SM2');
    const login = await request(app).post('/?action=FeLogin').send({ identifier: TO });
    expect(login.body.data).toMatchObject({
      next_step: 14,
      otp: { fallback: 'email', notified: { email: true, sms: true } },
    });
    expect(mails).toEqual(['mario@example.com']);
  });

  it('falls back when no receipt came within sms.receipts.timeout_seconds, and not before', async () => {
    const { app, twilio, clock } = setup();
    twilio('SM1');
    await request(app).post('/?action=otp_generate').send({ uid: TO });
    clock.now += 31_000;
    twilio('SM2');
    const early = await request(app).post('/?action=otp_generate').send({ uid: TO });
    expect(early.body.data.fallback).toBeUndefined();

    clock.now += 61_000;
    identityHolds();
    twilio('SM3');
    const late = await request(app).post('/?action=otp_generate').send({ uid: TO });
    expect(late.body.data).toMatchObject({ fallback: 'email', notified: { email: true, sms: true } });
  });

  it('counts a verified code as the conversion of its entry, in the ledger and the metrics', async () => {
    const { app, twilio, deps } = setup();
    twilio('SM1');
    const sent = await request(app).post('/?action=otp_generate').send({ uid: TO });
    await request(app).post('/?action=verify_otp').send({ email: TO, otp_code: sent.body.data.otp });
    await new Promise((resolve) => setImmediate(resolve));
    const report = (await ledger(app)).body.data;
    expect(report.totals[0]).toMatchObject({ sent: 1, verified: 1, conversion: 1 });
    expect(await deps.metrics.render()).toMatch(
      /lfa_sms_verified_total\{provider="twilio",channel="sms",country="IT"\} 1/,
    );
  });
});
