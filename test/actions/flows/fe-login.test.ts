import nock from 'nock';
import { useNock } from '../../support/nock';
import { BASE, fixture, formOf, intercept, paths, setCookies } from '../identity/support';
import { SMS_KEY, smsGateway, useSmtp } from '../otp/harness';
import { accountReplies, collector, COLLECTOR_TOKEN, flowsApp, MARIO, searchReply, tokenFor } from './support';

describe('FeLogin and FeVerifyOtp: logging in', () => {
  useNock();
  const smtp = useSmtp();

  describe('by phone', () => {
    it('sends an SMS code only and answers step 14 with flow phone and the send metadata', async () => {
      const { call } = flowsApp(smtp.port());
      const sms = smsGateway();
      const res = await call('FeLogin', { identifier: '+39 333 123 4567' });
      expect(res.body).toEqual({
        success: true,
        error: null,
        data: {
          next_step: 14,
          flow: 'phone',
          otp: {
            resent: false,
            retry_after: 60,
            cooldown: 60,
            expires_in: 300,
            notified: { sms: true, email: false, channel: 'sms' },
          },
        },
      });
      expect(sms.sent).toEqual([
        expect.objectContaining({ receiver: MARIO.phone, authorization: `Bearer ${SMS_KEY}` }),
      ]);
      expect(smtp.mails).toHaveLength(0);
    });

    it('logs an existing user in at step 90 with a token, cookie __utp and the collector ingest', async () => {
      const { call, deps } = flowsApp(smtp.port());
      const sms = smsGateway();
      const ingest = collector();
      const search = intercept('POST', paths.search, 200, searchReply(MARIO));
      const token = intercept('POST', paths.token, 200, fixture('token'));
      await call('FeLogin', { identifier: '3331234567' });

      const res = await call('FeVerifyOtp', { flow: 'phone', phone: '+39 333 1234567', otp_code: sms.codes()[0] });
      const accessToken = fixture<{ access_token: string }>('token').access_token;
      expect(res.body).toEqual({
        success: true,
        error: null,
        data: {
          next_step: 90,
          flow: 'phone',
          screen: 'success',
          done: true,
          uid: MARIO.uid,
          access_token: accessToken,
          proof: expect.any(String),
        },
      });
      expect(setCookies(res).join()).toContain(`__utp=${accessToken}`);
      expect(JSON.parse(formOf(search.seen[0]!).custom_fields!)).toEqual([
        { field_name: 'otp_phone', data_type: 'NUMBER', condition: { type: 'EQUAL', value: MARIO.digits } },
      ]);
      expect(token.seen[0]!.query).toMatchObject({ uid: MARIO.uid });

      expect(await deps.loginIngest.drain(2000)).toBe(true);
      expect(ingest.ingested).toEqual([{ body: { uid: MARIO.uid, accessToken }, token: COLLECTOR_TOKEN }]);
    });

    it('refuses a wrong code with reason invalid and stays at 14 (the right code still works)', async () => {
      const { call } = flowsApp(smtp.port());
      const sms = smsGateway();
      await call('FeLogin', { identifier: MARIO.phone });
      const wrong = sms.codes()[0] === '000000' ? '111111' : '000000';
      const res = await call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: wrong });
      expect(res.body).toEqual({ success: false, error: 'OTP non valido.', data: { reason: 'invalid', valid: false } });

      intercept('POST', paths.search, 200, searchReply());
      const retried = await call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: sms.codes()[0] });
      expect(retried.body.data.next_step).toBe(24);
    });

    it('answers step 24 with a phone_proof and flow phone_register when no account holds the verified phone', async () => {
      const { call } = flowsApp(smtp.port());
      const sms = smsGateway();
      intercept('POST', paths.search, 200, searchReply());
      await call('FeLogin', { identifier: MARIO.phone });
      const res = await call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: sms.codes()[0] });
      expect(res.body).toEqual({
        success: true,
        error: null,
        data: { next_step: 24, flow: 'phone_register', phone_proof: expect.any(String) },
      });
      expect(setCookies(res)).toEqual([]);
    });

    it('puts the plain code in otp.otp only when otp.debug is on', async () => {
      smsGateway();
      const on = await flowsApp(smtp.port(), { otp: { debug: true } }).call('FeLogin', { identifier: MARIO.phone });
      expect(on.body.data.otp.otp).toMatch(/^\d{6}$/);
      const off = await flowsApp(smtp.port()).call('FeLogin', { identifier: '+393331112222' });
      expect(off.body.data.otp).not.toHaveProperty('otp');
    });
  });

  describe('by email', () => {
    it('sends a mail code and answers step 33 with flow email', async () => {
      const { call } = flowsApp(smtp.port());
      const sms = smsGateway();
      const res = await call('FeLogin', { identifier: 'Mario.Rossi@example.com' });
      expect(res.body.data).toEqual({
        next_step: 33,
        flow: 'email',
        otp: expect.objectContaining({ notified: { sms: false, email: true } }),
      });
      expect(smtp.mails.map((m) => m.to)).toEqual([[MARIO.email]]);
      expect(sms.sent).toHaveLength(0);
    });

    it('logs in at 90 an account with a phone on file, reading the custom fields with the v3 profile', async () => {
      const { call, deps } = flowsApp(smtp.port());
      smsGateway();
      const ingest = collector();
      const { usersGet, userGet } = accountReplies(MARIO);
      const byEmail = intercept('POST', paths.usersGet, 200, usersGet);
      const profile = intercept('POST', paths.userGet, 200, userGet);
      intercept('POST', paths.token, 200, tokenFor(MARIO.uid));
      await call('FeLogin', { identifier: MARIO.email });

      const res = await call('FeVerifyOtp', { flow: 'email', email: MARIO.email, otp_code: smtp.codes()[0] });
      expect(res.body.data).toEqual({
        next_step: 90,
        flow: 'email_with_phone',
        screen: 'success',
        done: true,
        uid: MARIO.uid,
        access_token: tokenFor(MARIO.uid).access_token,
        proof: expect.any(String),
      });
      expect(byEmail.seen[0]!.query).toMatchObject({ email: MARIO.email });
      expect(formOf(profile.seen[0]!)).toMatchObject({ uid: MARIO.uid });
      await deps.loginIngest.drain(2000);
      expect(ingest.ingested).toHaveLength(1);
    });

    it('answers step 61 with a proof, and no token, for an account without a phone', async () => {
      const { call } = flowsApp(smtp.port());
      const { usersGet, userGet } = accountReplies({ uid: 'PNIg1ul1aB1anc', email: 'giulia.bianchi@example.com' });
      intercept('POST', paths.usersGet, 200, usersGet);
      intercept('POST', paths.userGet, 200, userGet);
      await call('FeLogin', { identifier: 'giulia.bianchi@example.com' });
      const res = await call('FeVerifyOtp', {
        flow: 'email',
        email: 'giulia.bianchi@example.com',
        otp_code: smtp.codes()[0],
      });
      expect(res.body.data).toEqual({
        next_step: 61,
        flow: 'email_add_phone',
        uid: 'PNIg1ul1aB1anc',
        proof: expect.any(String),
      });
      expect(setCookies(res)).toEqual([]);
    });

    it('answers step 37 with a register_proof when no account holds the email', async () => {
      const { call } = flowsApp(smtp.port());
      intercept('POST', paths.usersGet, 404, fixture('users-get-not-found'));
      await call('FeLogin', { identifier: 'nuovo@example.com' });
      const res = await call('FeVerifyOtp', { flow: 'email', email: 'nuovo@example.com', otp_code: smtp.codes()[0] });
      expect(res.body.data).toEqual({ next_step: 37, flow: 'email_register', register_proof: expect.any(String) });
    });
  });

  // A phone registrant's account: the email typed at registration, never confirmed, their phone on it.
  describe('by email, an account whose email was never confirmed and that holds a phone', () => {
    const ELENA = {
      uid: 'PNIel3n4N3r1xx',
      email: 'elena.neri@example.com',
      phone: '+393336660606',
      digits: '393336660606',
    };

    /** The provider as the claim meets it: users/get (unconfirmed), the profile with the phone, the drop, the read-back. */
    function unconfirmedAccount(readBack: 'dropped' | 'kept') {
      const withPhone = accountReplies(ELENA);
      const withoutPhone = accountReplies({ uid: ELENA.uid, email: ELENA.email });
      intercept('POST', paths.usersGet, 200, { ...withPhone.usersGet, email_confirmation_state: 'unconfirmed' });
      const reads = nock(BASE)
        .post(paths.userGet)
        .query(true)
        .reply(200, withPhone.userGet)
        .post(paths.userGet)
        .query(true)
        .reply(200, readBack === 'dropped' ? withoutPhone.userGet : withPhone.userGet);
      const drop = intercept('POST', paths.update, 200, fixture('user-update'));
      const doi = intercept('POST', paths.doi, 200, fixture('doi-status'));
      return { reads, drop, doi };
    }

    async function proveEmail(
      call: (action: string, body: Record<string, unknown>) => Promise<{ body: { data: Record<string, unknown> } }>,
    ) {
      await call('FeLogin', { identifier: ELENA.email });
      return call('FeVerifyOtp', { flow: 'email', email: ELENA.email, otp_code: smtp.codes()[0] });
    }

    it('answers 65: the phone dropped and read back gone, the email confirmed, a code sent to that phone, shown masked', async () => {
      const { call } = flowsApp(smtp.port());
      const sms = smsGateway();
      const { reads, drop, doi } = unconfirmedAccount('dropped');

      const res = await proveEmail(call);

      expect(res.body.data).toEqual({
        next_step: 65,
        flow: 'email_with_phone',
        uid: ELENA.uid,
        phone_hint: '+39 *******606',
        otp: expect.objectContaining({ notified: { sms: true, email: false, channel: 'sms' } }),
        pending_proof: expect.any(String),
      });
      expect(drop.seen.map((s) => s.body)).toEqual([{ otp_phone: null }]);
      expect(reads.isDone()).toBe(true);
      expect(doi.scope.isDone()).toBe(true);
      expect(sms.sent.map((s) => s.receiver)).toEqual([ELENA.phone]);
    });

    it('keeps the phone when its code comes back with the step-65 proof: saved again, a token, 90', async () => {
      const { call, deps } = flowsApp(smtp.port());
      const sms = smsGateway();
      unconfirmedAccount('dropped');
      const ingest = collector();
      const pending = (await proveEmail(call)).body.data.pending_proof;
      intercept('POST', paths.search, 200, searchReply());
      const save = intercept('POST', paths.update, 200, fixture('user-update'));
      intercept('POST', paths.token, 200, tokenFor(ELENA.uid));

      const res = await call('FeVerifyOtp', {
        flow: 'email_with_phone',
        otp_code: sms.codes()[0],
        pending_proof: pending,
      });

      expect(res.body.data).toMatchObject({
        next_step: 90,
        flow: 'email_with_phone',
        done: true,
        uid: ELENA.uid,
        access_token: tokenFor(ELENA.uid).access_token,
      });
      expect(save.seen.map((s) => s.body)).toEqual([{ otp_phone: Number(ELENA.digits) }]);
      await expect(deps.otp.phoneHeldFor(ELENA.phone)).resolves.toBeNull();
      await deps.loginIngest.drain(2000);
      expect(ingest.ingested).toHaveLength(1);
    });

    it('answers 61 and calls no provider when the phone is declined with the step-65 proof', async () => {
      const { call, deps } = flowsApp(smtp.port());
      smsGateway();
      unconfirmedAccount('dropped');
      const pending = (await proveEmail(call)).body.data.pending_proof;

      const res = await call('FeVerifyOtp', { flow: 'email_phone_declined', pending_proof: pending });

      expect(res.body.data).toEqual({
        next_step: 61,
        flow: 'email_add_phone',
        uid: ELENA.uid,
        proof: expect.any(String),
      });
      expect(nock.pendingMocks()).toEqual([]);
      await expect(deps.otp.phoneHeldFor(ELENA.phone)).resolves.toBeNull();
    });

    it('answers upstream_error, sends no code and confirms nothing when the provider keeps the phone it was told to drop', async () => {
      const { call } = flowsApp(smtp.port());
      const sms = smsGateway();
      const { doi } = unconfirmedAccount('kept');

      const res = await proveEmail(call);

      expect(res.body).toMatchObject({
        success: false,
        data: { reason: 'upstream_error', check: 'otp_phone_dropped' },
      });
      expect(sms.sent).toHaveLength(0);
      expect(doi.scope.isDone()).toBe(false);
    });

    it('refuses otp_code missing on any other flow, naming it', async () => {
      const { call } = flowsApp(smtp.port());
      const res = await call('FeVerifyOtp', { flow: 'email_with_phone' });
      expect(res.body).toMatchObject({
        success: false,
        data: { reason: 'invalid_request', issues: [{ path: 'otp_code' }] },
      });
    });
  });

  it('answers step 60 and sends nothing for the password path', async () => {
    const { call } = flowsApp(smtp.port());
    const res = await call('FeLogin', { identifier: MARIO.email, method: 'password' });
    expect(res.body).toEqual({ success: true, error: null, data: { next_step: 60, flow: 'email' } });
    expect(smtp.mails).toHaveLength(0);
  });

  it('refuses an identifier that is neither an email nor a phone, naming the field', async () => {
    const { call } = flowsApp(smtp.port());
    const res = await call('FeLogin', { identifier: 'mario' });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'identifier' }] },
    });
  });

  it('refuses a phone-like identifier that is not a valid phone, naming the field', async () => {
    const { call } = flowsApp(smtp.port());
    const res = await call('FeLogin', { identifier: '+39 12' });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'identifier' }] },
    });
  });
});
