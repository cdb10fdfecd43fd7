import nock from 'nock';
import pino from 'pino';
import { Writable } from 'node:stream';
import { ConfigError, deepMerge, loadConfig } from '../../../src/core/config/load';
import { testConfig, testDeps } from '../../support/app';
import { fixture, intercept, paths } from '../identity/support';
import { flowsApp, searchReply } from '../flows/support';
import { mailConfig, smsGateway, startApp, useNock, useSmtp, type Harness } from './harness';

/*
 * otp.test_numbers: identifiers for app-store review and QA with a fixed code. Nothing is sent
 * to them, the fixed code verifies, and every other rule holds as for anyone else.
 */

const TEST_PHONE = '+393330000001';
const TEST_CODE = '246810';
const TEST_EMAIL = 'Review@Example.test';
const TEST_EMAIL_CODE = '135790';
const testNumbers = { otp: { test_numbers: { [TEST_PHONE]: TEST_CODE, [TEST_EMAIL]: TEST_EMAIL_CODE } } };
const other = (code: string) => (code === '000000' ? '111111' : '000000');

describe('otp.test_numbers', () => {
  useNock();
  const smtp = useSmtp();

  describe('through otp_generate and verify_otp', () => {
    let app: Harness;
    afterEach(async () => {
      await app?.close();
    });
    const start = async (overrides: Record<string, unknown> = {}) => {
      app = await startApp(deepMerge({ ...mailConfig(smtp.port()), ...testNumbers }, overrides));
      return app;
    };
    const verify = (key: string, otp_code: string) => app.post('verify_otp', { uid: key, otp_code });

    it('sends no SMS to a test number, answers as for a real send, and its fixed code verifies', async () => {
      await start();
      const gateway = smsGateway();
      // The same number in a spelling the caller might type: keys are normalised as requests are.
      const res = await app.post('otp_generate', { uid: '+39 333 000 0001' });
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
      expect(gateway.sent).toEqual([]);
      expect((await verify(TEST_PHONE, TEST_CODE)).body.data).toEqual({
        valid: true,
        doi: null,
        access_token: null,
        proof: expect.any(String),
      });
    });

    it('answers a real number and a test number alike', async () => {
      await start();
      const gateway = smsGateway();
      const real = await app.post('otp_generate', { uid: '+393331234567' });
      const test = await app.post('otp_generate', { uid: TEST_PHONE });
      expect(test.status).toBe(real.status);
      expect(test.body).toEqual(real.body);
      expect(test.headers['content-length']).toBe(real.headers['content-length']);
      expect(gateway.sent.map((s) => s.receiver)).toEqual(['+393331234567']);
    });

    it('sends no mail to a test email (matched whatever its case) and its fixed code verifies', async () => {
      await start();
      const res = await app.post('otp_generate', { uid: 'review@example.TEST' });
      expect(res.body.data.notified).toEqual({ email: true, sms: false });
      expect(smtp.mails).toEqual([]);
      expect((await verify('review@example.test', TEST_EMAIL_CODE)).body.data.valid).toBe(true);
    });

    it('burns attempts on wrong codes: after otp.max_attempts the fixed code fails too', async () => {
      await start({ otp: { max_attempts: 3 } });
      await app.post('otp_generate', { uid: TEST_PHONE });
      expect((await verify(TEST_PHONE, other(TEST_CODE))).body.data.reason).toBe('invalid');
      expect((await verify(TEST_PHONE, other(TEST_CODE))).body.data.reason).toBe('invalid');
      expect((await verify(TEST_PHONE, other(TEST_CODE))).body.data.reason).toBe('too_many_attempts');
      expect((await verify(TEST_PHONE, TEST_CODE)).body.data.reason).toBe('too_many_attempts');
    });

    it('keeps the resend cooldown: a second send within it is already_sent', async () => {
      await start();
      await app.post('otp_generate', { uid: TEST_PHONE });
      const again = await app.post('otp_generate', { uid: TEST_PHONE });
      expect(again.body).toEqual({
        success: false,
        error: 'OTP già inviato. Riprova tra 60 secondi.',
        data: { reason: 'already_sent', retry_after: 60, cooldown: 60, blocked: true },
      });
      app.tick(60_000);
      expect((await app.post('otp_generate', { uid: TEST_PHONE })).body.success).toBe(true);
    });

    it('lets the fixed code expire with otp.ttl_seconds', async () => {
      await start();
      await app.post('otp_generate', { uid: TEST_PHONE });
      app.tick(300_000);
      expect((await verify(TEST_PHONE, TEST_CODE)).body.data.reason).toBe('expired');
    });

    it('does not verify the fixed code for any other identifier', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: TEST_PHONE });
      await app.post('otp_generate', { uid: '+393331234567' });
      expect((await verify('+393331234567', TEST_CODE)).body.data).toEqual({ reason: 'invalid', valid: false });
      // The other identifier's real code still works: the test code cost it one attempt only.
      expect((await verify('+393331234567', gateway.codes()[0]!)).body.data.valid).toBe(true);
    });

    it('gives a real key sending to a test number a random code, not the fixed one', async () => {
      await start();
      const gateway = smsGateway();
      const res = await app.post('otp_generate', { uid: 'someone@example.test', phone: TEST_PHONE });
      expect(res.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
      expect(gateway.sent).toEqual([]);
      expect((await verify('someone@example.test', TEST_CODE)).body.data.reason).toBe('invalid');
    });

    it('delivers a real code to a real address even when the key is a test number', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: TEST_PHONE, phone: '+393331234567' });
      expect(gateway.sent.map((s) => s.receiver)).toEqual(['+393331234567']);
      expect(gateway.codes()[0]).not.toBe(TEST_CODE);
      expect((await verify(TEST_PHONE, gateway.codes()[0]!)).body.data.valid).toBe(true);
    });
  });

  describe('through the FeLogin phone journey', () => {
    it('logs a test number in with its fixed code, and no SMS is sent', async () => {
      const test = { uid: 'PNItestReview01', phone: TEST_PHONE, digits: TEST_PHONE.slice(1) };
      const { call, deps } = flowsApp(smtp.port(), testNumbers);
      const gateway = smsGateway();
      const sent = await call('FeLogin', { identifier: '333 000 0001' });
      expect(sent.body).toEqual({
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

      intercept('POST', paths.search, 200, searchReply(test));
      intercept('POST', paths.token, 200, fixture('token'));
      nock('https://collector.test').persist().post('/ingest/login').reply(202, { accepted: true });
      const res = await call('FeVerifyOtp', { flow: 'phone', phone: TEST_PHONE, otp_code: TEST_CODE });
      expect(res.body.data).toMatchObject({
        next_step: 90,
        done: true,
        uid: test.uid,
        access_token: fixture<{ access_token: string }>('token').access_token,
      });
      expect(gateway.sent).toEqual([]);
      expect(smtp.mails).toEqual([]);
      expect(await deps.loginIngest.drain(2000)).toBe(true);
      await deps.close();
    });

    it('refuses a wrong code for a test number as for anyone', async () => {
      const { call, deps } = flowsApp(smtp.port(), testNumbers);
      await call('FeLogin', { identifier: TEST_PHONE });
      const res = await call('FeVerifyOtp', { flow: 'phone', phone: TEST_PHONE, otp_code: other(TEST_CODE) });
      expect(res.body).toEqual({ success: false, error: 'OTP non valido.', data: { reason: 'invalid', valid: false } });
      await deps.close();
    });
  });

  describe('at start-up', () => {
    it('refuses test numbers when NODE_ENV=production, unless otp.test_numbers_in_production', () => {
      const env = {
        NODE_ENV: 'production',
        SECURITY__SECRET: 's'.repeat(40),
        OTP__TEST_NUMBERS: JSON.stringify({ [TEST_PHONE]: TEST_CODE }),
      };
      const refused = (() => {
        try {
          loadConfig({ env });
        } catch (err) {
          return err;
        }
        return null;
      })();
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).problems).toEqual([
        expect.stringContaining('otp.test_numbers: fixed codes are refused in production'),
      ]);
      expect((refused as ConfigError).message).not.toContain(TEST_CODE);
      expect(loadConfig({ env: { ...env, OTP__TEST_NUMBERS_IN_PRODUCTION: 'true' } }).otp.test_numbers).toEqual({
        [TEST_PHONE]: TEST_CODE,
      });
    });

    it('reads the map from OTP__TEST_NUMBERS as JSON', () => {
      expect(
        loadConfig({ env: { NODE_ENV: 'test', OTP__TEST_NUMBERS: JSON.stringify({ [TEST_PHONE]: '012345' }) } }).otp
          .test_numbers,
      ).toEqual({ [TEST_PHONE]: '012345' });
    });

    it.each([
      ['a code of another length than otp.length', { [TEST_PHONE]: '12345' }, 'the code must be 6 digits'],
      ['a code with letters', { [TEST_PHONE]: '12345a' }, 'the code must be 6 digits'],
      ['a phone not in E.164', { '3330000001': TEST_CODE }, 'must be an E.164 phone'],
      ['text that is not JSON', 'not json', 'otp.test_numbers: is not valid JSON'],
      ['JSON that is not a map', '["+393330000000"]', 'expected record'],
    ])('refuses %s, without echoing the codes', (_what, value, problem) => {
      const attempt = () => testConfig({ otp: { test_numbers: value } });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(problem);
      expect(attempt).not.toThrow(TEST_CODE);
    });

    it('refuses a valid-looking E.164 string that is no phone number, at start-up as bad configuration', () => {
      expect(() => testDeps(testConfig({ otp: { test_numbers: { '+399999999': TEST_CODE } } }))).toThrow(ConfigError);
    });

    it('logs a warning with the count and the masked identifiers, never a code', () => {
      const lines: string[] = [];
      const log = pino(
        { level: 'warn' },
        new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) }),
      );
      const deps = testDeps(testConfig(testNumbers), { log });
      const line = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => String(l.msg).startsWith('otp.test_numbers'));
      expect(line).toMatchObject({ level: 40, count: 2, identifiers: [expect.any(String), expect.any(String)] });
      const text = JSON.stringify(line);
      for (const secret of [TEST_CODE, TEST_EMAIL_CODE, TEST_PHONE, 'review@example.test'])
        expect(text).not.toContain(secret);
      void deps.close();
    });

    it('logs nothing about test numbers when none are configured', () => {
      const lines: string[] = [];
      const log = pino(
        { level: 'warn' },
        new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) }),
      );
      void testDeps(testConfig(), { log }).close();
      expect(lines.join('')).not.toContain('test_numbers');
    });
  });
});
