import nock from 'nock';
import {
  mailConfig,
  memoryLog,
  phoneHolder,
  SMS_KEY,
  smsGateway,
  startApp,
  useNock,
  useSmtp,
  type Harness,
} from './harness';

const PHONE = '+39 333 123 4567';
const E164 = '+393331234567';
const smsText = (code: string) =>
  `Login: il tuo codice di verifica è ${code}. Scade tra 5 minuti. Non condividerlo con nessuno.`;

describe('otp_generate', () => {
  useNock();
  const smtp = useSmtp();
  let app: Harness;
  const start = async (overrides: Record<string, unknown> = {}, depsOverrides = {}) => {
    app = await startApp({ ...mailConfig(smtp.port()), ...overrides }, depsOverrides);
    return app;
  };
  afterEach(async () => {
    await app?.close();
  });

  describe('rule 1: SMS only', () => {
    it('sends one SMS to the E.164 phone with the rendered template, the sender and the Bearer key', async () => {
      await start();
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE });
      expect(res.status).toBe(200);
      expect(gateway.sent).toHaveLength(1);
      const [code] = gateway.codes();
      expect(code).toMatch(/^\d{6}$/);
      expect(gateway.sent[0]).toEqual({
        receiver: E164,
        body: smsText(code!),
        sender: 'Login',
        authorization: `Bearer ${SMS_KEY}`,
      });
      expect(smtp.mails).toHaveLength(0);
    });

    it('answers the send metadata of the contract and no code when otp.debug is off', async () => {
      await start();
      smsGateway();
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE });
      expect(res.body).toEqual({
        success: true,
        error: null,
        data: {
          resent: false,
          retry_after: 60,
          cooldown: 60,
          expires_in: 300,
          notified: { email: false, sms: true, channel: 'sms' },
        },
      });
    });

    it('sends by SMS only to a phone-valued uid without a phone field', async () => {
      await start();
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: '3331234567' });
      expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
      expect(gateway.sent.map((s) => s.receiver)).toEqual([E164]);
    });

    it('sends by SMS only to an email uid with a phone and no notify_email', async () => {
      await start();
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: 'mario@example.test', phone: PHONE });
      expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
      expect(gateway.sent).toHaveLength(1);
      expect(smtp.mails).toHaveLength(0);
    });

    it('includes the plain code when otp.debug is on', async () => {
      await start({ otp: { debug: true } });
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body.data.otp).toBe(gateway.codes()[0]);
    });

    it('uses otp.length digits', async () => {
      await start({ otp: { length: 8 } });
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      expect(gateway.codes()[0]).toMatch(/^\d{8}$/);
    });
  });

  describe('rule 2: SMS and email', () => {
    it('sends the same code by SMS and by email with notify_email and phone when one account holds both', async () => {
      await start();
      const gateway = smsGateway();
      const holder = phoneHolder('mario@example.test');
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      expect(res.body.data.notified).toEqual({ email: true, sms: true, channel: 'sms' });
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0]!.to).toEqual(['mario@example.test']);
      expect(smtp.codes()).toEqual(gateway.codes());
      expect(holder.isDone()).toBe(true);
    });

    it('sends no mail to an address the phone’s account does not have: the code goes by SMS only', async () => {
      await start();
      const gateway = smsGateway();
      phoneHolder('mario@example.test');
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'attacker@example.test' });
      expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
      expect(smtp.mails).toHaveLength(0);
      expect(gateway.sent).toHaveLength(1);
    });

    it('sends no mail when no account holds the phone, nor when the provider cannot say', async () => {
      await start();
      smsGateway();
      phoneHolder(null);
      expect(
        (await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' })).body.data
          .notified,
      ).toEqual({ email: false, sms: true, channel: 'sms' });
      app.tick(60_000);
      nock('https://idp.otp.test').post('/api/v3/publisher/user/search').reply(503, 'down');
      expect(
        (await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' })).body.data
          .notified,
      ).toEqual({ email: false, sms: true, channel: 'sms' });
      expect(smtp.mails).toHaveLength(0);
    });

    it('asks the provider only within the per-IP send cap: a flood of phone-and-email requests reaches it once', async () => {
      await start({ rate_limits: { sends_per_ip_per_hour: 1 } });
      smsGateway();
      const holder = phoneHolder('mario@example.test');
      await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      expect(holder.isDone()).toBe(true);
      const search = nock('https://idp.otp.test')
        .post('/api/v3/publisher/user/search')
        .reply(200, { code: 0, users: [] });
      app.tick(60_000);
      const refused = await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      expect(refused.status).toBe(429);
      expect(refused.body.data).toMatchObject({ reason: 'rate_limited', limit: 'sends_per_ip_per_hour' });
      expect(search.isDone()).toBe(false);
    });

    it('takes email as an alias of notify_email', async () => {
      await start();
      smsGateway();
      phoneHolder('mario@example.test');
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE, email: 'mario@example.test' });
      expect(res.body.data.notified).toEqual({ email: true, sms: true, channel: 'sms' });
      expect(smtp.mails).toHaveLength(1);
    });

    it('fills every placeholder of the mail: code, minutes, app name and year', async () => {
      await start();
      smsGateway();
      phoneHolder('mario@example.test');
      await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      const [mail] = smtp.mails;
      expect(mail!.subject).toBe('Login: il tuo codice di verifica');
      expect(mail!.html).not.toContain('{{');
      expect(mail!.text).not.toContain('{{');
      expect(mail!.text).toContain('Il codice scade tra 5 minuti');
      expect(mail!.text).toContain('© 2030 Login');
      expect(mail!.html).toContain(smtp.codes()[0]!);
    });
  });

  describe('email only', () => {
    it('sends by email only to an email uid with notify_email and no phone', async () => {
      await start();
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: 'mario@example.test', notify_email: 'mario@example.test' });
      expect(res.body.data.notified).toEqual({ email: true, sms: false });
      expect(gateway.sent).toHaveLength(0);
      expect(smtp.mails).toHaveLength(1);
    });

    it('sends by email to an email uid given alone', async () => {
      await start();
      const res = await app.post('otp_generate', { uid: ' Mario@Example.test ' });
      expect(res.body.data.notified).toEqual({ email: true, sms: false });
      expect(smtp.mails[0]!.to).toEqual(['mario@example.test']);
    });
  });

  describe('rule 3: cooldown', () => {
    it('blocks a second send within the cooldown with the contract’s text and fields', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      app.tick(15_000);
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: false,
        error: 'OTP già inviato. Riprova tra 45 secondi.',
        data: { reason: 'already_sent', blocked: true, retry_after: 45, cooldown: 60 },
      });
      expect(gateway.sent).toHaveLength(1);
    });

    it('reports the configured cooldown in the blocked answer', async () => {
      await start({ otp: { resend_cooldown_seconds: 30 } });
      smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body.error).toBe('OTP già inviato. Riprova tra 30 secondi.');
      expect(res.body.data).toMatchObject({ retry_after: 30, cooldown: 30 });
    });

    it('treats every spelling of one phone as one key', async () => {
      await start();
      smsGateway();
      await app.post('otp_generate', { uid: '+39 333 123 4567' });
      const res = await app.post('otp_generate', { uid: '393331234567' });
      expect(res.body.data.reason).toBe('already_sent');
    });

    it('sends a new code once the cooldown is over and marks it resent', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      app.tick(60_000);
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body.success).toBe(true);
      expect(res.body.data.resent).toBe(true);
      expect(gateway.sent).toHaveLength(2);
    });

    it('does not mark resent a code that replaces an expired one', async () => {
      await start();
      smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      app.tick(300_000);
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body.data.resent).toBe(false);
    });
  });

  describe('channels', () => {
    it('skips email when mail.from_address is empty and still sends the SMS', async () => {
      await start({ mail: { from_address: '' } });
      smsGateway();
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
      expect(smtp.mails).toHaveLength(0);
    });

    it('skips SMS when sms.api_key is empty and still sends the mail', async () => {
      await start({ sms: { api_key: '' } });
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      expect(res.body.data.notified).toEqual({ email: true, sms: false });
      expect(gateway.sent).toHaveLength(0);
    });

    it('answers channel_not_configured when no chosen channel is configured', async () => {
      await start({ sms: { api_url: '' } });
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body).toEqual({
        success: false,
        error: 'Nessun canale di invio configurato per questo destinatario.',
        data: { reason: 'channel_not_configured' },
      });
    });

    it('succeeds when one of two channels fails, saying which one delivered', async () => {
      await start();
      smsGateway(500);
      phoneHolder('mario@example.test');
      const res = await app.post('otp_generate', { uid: PHONE, phone: PHONE, notify_email: 'mario@example.test' });
      expect(res.body.success).toBe(true);
      expect(res.body.data.notified).toEqual({ email: true, sms: false });
    });
  });

  describe('every channel failing', () => {
    it('answers delivery_failed', async () => {
      await start();
      smsGateway(503);
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body).toEqual({
        success: false,
        error: 'Invio del codice non riuscito. Riprova.',
        data: { reason: 'delivery_failed' },
      });
    });

    it('charges no cooldown: an immediate retry sends', async () => {
      await start();
      smsGateway(503);
      await app.post('otp_generate', { uid: PHONE });
      nock.cleanAll();
      const working = smsGateway();
      const res = await app.post('otp_generate', { uid: PHONE });
      expect(res.body.success).toBe(true);
      expect(res.body.data.resent).toBe(false);
      expect(working.sent).toHaveLength(1);
    });

    it('leaves the previous code valid after a failed resend', async () => {
      await start();
      const first = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      nock.cleanAll();
      app.tick(60_000);
      smsGateway(500);
      expect((await app.post('otp_generate', { uid: PHONE })).body.data.reason).toBe('delivery_failed');
      const verify = await app.post('verify_otp', { email: PHONE, otp_code: first.codes()[0] });
      expect(verify.body.success).toBe(true);
    });
  });

  describe('invalid requests', () => {
    it('refuses an unparseable phone naming the field, and sends nothing', async () => {
      await start();
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: 'mario@example.test', phone: '12345' });
      expect(res.body).toEqual({
        success: false,
        error: 'Richiesta non valida.',
        data: { reason: 'invalid_request', issues: [{ path: 'phone', message: 'non è un numero di telefono valido' }] },
      });
      expect(gateway.sent).toHaveLength(0);
    });

    it('refuses a phone-looking uid that is not a phone, naming uid', async () => {
      await start();
      const res = await app.post('otp_generate', { uid: '12345' });
      expect(res.body.data).toEqual({
        reason: 'invalid_request',
        issues: [{ path: 'uid', message: 'non è un numero di telefono valido' }],
      });
    });

    it('refuses a request with nowhere to send the code', async () => {
      await start();
      const res = await app.post('otp_generate', { uid: 'user-42' });
      expect(res.body.data.reason).toBe('invalid_request');
      expect(res.body.data.issues[0].path).toBe('phone');
    });

    it('refuses a missing uid and a malformed notify_email', async () => {
      await start();
      expect((await app.post('otp_generate', { phone: PHONE })).body.data.issues[0].path).toBe('uid');
      expect(
        (await app.post('otp_generate', { uid: PHONE, notify_email: 'not-an-email' })).body.data.issues[0].path,
      ).toBe('notify_email');
    });

    it('refuses a phone outside sms.allowed_regions without sending', async () => {
      await start({ sms: { allowed_regions: ['IT'] } });
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: '+1 202 555 0143' });
      expect(res.body.data.reason).toBe('region_not_allowed');
      expect(gateway.sent).toHaveLength(0);
    });

    it('sends SMS only to the default region when sms.allowed_regions is not set', async () => {
      await start();
      const gateway = smsGateway();
      expect((await app.post('otp_generate', { uid: '+44 7400 123456' })).body.data.reason).toBe('region_not_allowed');
      expect((await app.post('otp_generate', { uid: PHONE })).body.success).toBe(true);
      expect(gateway.sent.map((s) => s.receiver)).toEqual(['+393331234567']);
    });

    it('sends to every region sms.allowed_regions lists', async () => {
      await start({ sms: { allowed_regions: ['IT', 'GB'] } });
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: '+44 7400 123456' });
      expect(res.body).toMatchObject({ success: true });
      expect(gateway.sent).toHaveLength(1);
    });
  });

  describe('OTP log', () => {
    it('writes one line per generate and send, with the [OTP] prefix, a masked phone and never the code', async () => {
      const log = memoryLog();
      await start({}, { otpLog: log.logger });
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      const code = gateway.codes()[0]!;
      expect(log.lines.map((l) => [l.event, l.msg])).toEqual([
        ['generate', '[OTP] generate'],
        ['send', '[OTP] send'],
      ]);
      const text = JSON.stringify(log.lines);
      expect(text).not.toContain(code);
      expect(text).not.toContain('3331234567');
      expect(log.lines[1]).toMatchObject({ channel: 'sms', to: '*********567', outcome: 'sent' });
    });

    it('carries the plain code only when otp.debug is on', async () => {
      const log = memoryLog();
      await start({ otp: { debug: true } }, { otpLog: log.logger });
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      expect(log.lines[0]).toMatchObject({ event: 'generate', debug_code: gateway.codes()[0] });
    });
  });
});
