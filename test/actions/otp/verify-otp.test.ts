import nock from 'nock';
import { mailConfig, memoryLog, smsGateway, startApp, useNock, useSmtp, type Harness } from './harness';

const PHONE = '+393331234567';
const WRONG = '000000x';

describe('verify_otp', () => {
  useNock();
  const smtp = useSmtp();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });

  /** Sends a code by SMS to PHONE and returns it as read from the gateway call. */
  async function sendCode(): Promise<string> {
    const gateway = smsGateway();
    await app.post('otp_generate', { uid: PHONE });
    nock.cleanAll();
    return gateway.codes()[0]!;
  }
  const verify = (otp_code: string, key: Record<string, unknown> = { email: PHONE }) =>
    app.post('verify_otp', { ...key, otp_code });

  it('accepts the right code with valid true, doi null and access_token null', async () => {
    app = await startApp();
    const code = await sendCode();
    const res = await verify(code);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: { valid: true, doi: null, access_token: null, proof: expect.any(String) },
    });
  });

  it('accepts a code once: the second try is invalid', async () => {
    app = await startApp();
    const code = await sendCode();
    await verify(code);
    expect((await verify(code)).body).toEqual({
      success: false,
      error: 'OTP non valido.',
      data: { reason: 'invalid', valid: false },
    });
  });

  it('answers OTP non valido. to a wrong code', async () => {
    app = await startApp();
    await sendCode();
    expect((await verify(WRONG)).body).toEqual({
      success: false,
      error: 'OTP non valido.',
      data: { reason: 'invalid', valid: false },
    });
  });

  it('answers OTP scaduto. once the lifetime is over, even to the right code', async () => {
    app = await startApp();
    const code = await sendCode();
    app.tick(300_000);
    expect((await verify(code)).body).toEqual({
      success: false,
      error: 'OTP scaduto. Richiedi un nuovo codice.',
      data: { reason: 'expired', valid: false },
    });
  });

  it('honours a short otp.ttl_seconds', async () => {
    app = await startApp({ otp: { ttl_seconds: 2 } });
    const code = await sendCode();
    app.tick(2_000);
    expect((await verify(code)).body.data.reason).toBe('expired');
  });

  it('takes the key from uid when email is absent', async () => {
    app = await startApp();
    const code = await sendCode();
    expect((await verify(code, { uid: '+39 333 123 4567' })).body.success).toBe(true);
  });

  it('finds the record under any spelling of the phone', async () => {
    app = await startApp();
    const code = await sendCode();
    expect((await verify(code, { email: '393331234567' })).body.success).toBe(true);
  });

  it('verifies a code read out of a delivered mail', async () => {
    app = await startApp(mailConfig(smtp.port()));
    await app.post('otp_generate', { uid: 'mario@example.test', notify_email: 'mario@example.test' });
    const [code] = smtp.codes();
    expect(code).toMatch(/^\d{6}$/);
    expect((await verify(code!, { email: 'MARIO@example.test' })).body.data).toEqual({
      valid: true,
      doi: null,
      access_token: null,
      proof: expect.any(String),
    });
  });

  describe('wrong guesses', () => {
    it('answers too_many_attempts on the fifth wrong guess, and the code is burned: the right one fails too', async () => {
      app = await startApp();
      const code = await sendCode();
      for (let i = 0; i < 4; i++) expect((await verify(WRONG)).body.data.reason).toBe('invalid');
      expect((await verify(WRONG)).body).toEqual({
        success: false,
        error: 'Troppi tentativi. Richiedi un nuovo codice.',
        data: { reason: 'too_many_attempts', valid: false },
      });
      expect((await verify(code)).body.data.reason).toBe('too_many_attempts');
    });

    it('honours otp.max_attempts', async () => {
      app = await startApp({ otp: { max_attempts: 2 } });
      await sendCode();
      await verify(WRONG);
      expect((await verify(WRONG)).body.data.reason).toBe('too_many_attempts');
    });

    it('keeps counting across a resend within the code lifetime', async () => {
      app = await startApp();
      await sendCode();
      for (let i = 0; i < 3; i++) await verify(WRONG);
      app.tick(60_000);
      const code = await sendCode();
      expect((await verify(WRONG)).body.data.reason).toBe('invalid');
      expect((await verify(WRONG)).body.data.reason).toBe('too_many_attempts');
      expect((await verify(code)).body.data.reason).toBe('too_many_attempts');
    });

    it('keeps counting across a resend that failed on every channel', async () => {
      app = await startApp();
      await sendCode();
      for (let i = 0; i < 3; i++) await verify(WRONG);
      app.tick(60_000);
      smsGateway(500);
      expect((await app.post('otp_generate', { uid: PHONE })).body.data.reason).toBe('delivery_failed');
      expect((await verify(WRONG)).body.data.reason).toBe('invalid');
      expect((await verify(WRONG)).body.data.reason).toBe('too_many_attempts');
    });
  });

  describe('invalid requests', () => {
    it('refuses a request without the OTP key, naming email', async () => {
      app = await startApp();
      const res = await app.post('verify_otp', { otp_code: '123456' });
      expect(res.body).toEqual({
        success: false,
        error: 'Richiesta non valida.',
        data: { reason: 'invalid_request', issues: [{ path: 'email', message: expect.any(String) }] },
      });
    });

    it('refuses a missing or non-string otp_code', async () => {
      app = await startApp();
      expect((await app.post('verify_otp', { email: PHONE })).body.data.issues[0].path).toBe('otp_code');
      expect((await app.post('verify_otp', { email: PHONE, otp_code: 123456 })).body.data.issues[0].path).toBe(
        'otp_code',
      );
    });
  });

  it('logs one [OTP] verify line with the outcome and a masked key, never the code', async () => {
    const log = memoryLog();
    app = await startApp({}, { otpLog: log.logger });
    const code = await sendCode();
    await verify(code);
    const line = log.lines.find((l) => l.event === 'verify');
    expect(line).toMatchObject({ msg: '[OTP] verify', key: '*********567', outcome: 'ok' });
    expect(JSON.stringify(log.lines)).not.toContain(code);
  });
});
