import { flowsApp } from '../flows/support';
import { mailConfig, smsGateway, startApp, useNock, useSmtp, type Harness } from './harness';

/*
 * Code messages and error texts per language: the `locale` field of the actions that send a
 * code, else Accept-Language, else mail.default_locale; Italian by default, as before.
 */

const PHONE = '+393331234567';
const EMAIL = 'mario@example.test';
const italianSms = (code: string) =>
  `Login: il tuo codice di verifica è ${code}. Scade tra 5 minuti. Non condividerlo con nessuno.`;
const englishSms = (code: string) =>
  `Login: your verification code is ${code}. It expires in 5 minutes. Do not share it with anyone.`;

describe('languages of code messages and error texts', () => {
  useNock();
  const smtp = useSmtp();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });
  const start = async (overrides: Record<string, unknown> = {}) => {
    app = await startApp({ ...mailConfig(smtp.port()), ...overrides });
    return app;
  };

  describe('the code message', () => {
    it('sends an English mail for locale en', async () => {
      await start();
      const res = await app.post('otp_generate', { uid: EMAIL, locale: 'en' });
      expect(res.body.data.notified).toEqual({ email: true, sms: false });
      expect(smtp.mails).toHaveLength(1);
      const [mail] = smtp.mails;
      const [code] = smtp.codes();
      expect(mail!.subject).toBe('Login: your verification code');
      expect(mail!.text).toMatch(new RegExp(`Here is your verification code:\\s+${code}\\s`));
      expect(mail!.text).toContain('The code expires in 5 minutes');
      expect(mail!.html).toContain('<html lang="en">');
    });

    it('keeps the Italian mail, subject included, without a locale or Accept-Language', async () => {
      await start();
      await app.post('otp_generate', { uid: EMAIL });
      const [mail] = smtp.mails;
      expect(mail!.subject).toBe('Login: il tuo codice di verifica');
      expect(mail!.text).toContain('Ecco il tuo codice di verifica:');
      expect(mail!.html).toContain('<html lang="it">');
    });

    it('sends an English SMS when Accept-Language prefers English', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE }).set('Accept-Language', 'en-GB,en;q=0.9,it;q=0.5');
      expect(gateway.sent[0]!.body).toBe(englishSms(gateway.codes()[0]!));
    });

    it('lets the locale field win over Accept-Language', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE, locale: 'it' }).set('Accept-Language', 'en');
      expect(gateway.sent[0]!.body).toBe(italianSms(gateway.codes()[0]!));
    });

    it('reads a regional tag as its language (en-GB, EN_us)', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE, locale: 'EN_us' });
      expect(gateway.sent[0]!.body).toBe(englishSms(gateway.codes()[0]!));
    });

    it('falls back from a locale it has no templates for: to Accept-Language, then to the default', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE, locale: 'fr' }).set('Accept-Language', 'de, en;q=0.8');
      app.tick(60_000);
      await app.post('otp_generate', { uid: PHONE, locale: 'fr' }).set('Accept-Language', 'de');
      app.tick(60_000);
      await app.post('otp_generate', { uid: PHONE }).set('Accept-Language', '*');
      const [first, second, third] = gateway.codes();
      expect(gateway.sent.map((s) => s.body)).toEqual([englishSms(first!), italianSms(second!), italianSms(third!)]);
    });

    it('follows mail.default_locale when the request names no language', async () => {
      await start({ mail: { ...mailConfig(smtp.port()).mail, default_locale: 'en' } });
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      expect(gateway.sent[0]!.body).toBe(englishSms(gateway.codes()[0]!));
    });

    it('sends the FeLogin email code in English for locale en', async () => {
      const { call, deps } = flowsApp(smtp.port());
      const res = await call('FeLogin', { identifier: EMAIL, locale: 'en' });
      expect(res.body.data.next_step).toBe(33);
      expect(smtp.mails.map((m) => m.subject)).toEqual(['Login: your verification code']);
      await deps.close();
    });

    it('refuses a locale that is no language tag, so it cannot name a path', async () => {
      await start();
      const gateway = smsGateway();
      for (const locale of ['../it', 'en/../../etc', 'x'.repeat(40), 'e']) {
        const res = await app.post('otp_generate', { uid: PHONE, locale });
        expect(res.body).toMatchObject({
          success: false,
          data: {
            reason: 'invalid_request',
            issues: expect.arrayContaining([expect.objectContaining({ path: 'locale' })]),
          },
        });
      }
      expect(gateway.sent).toEqual([]);
    });
  });

  describe('the WebOTP line (sms.webotp_domain)', () => {
    it('ends the SMS with @<domain> #<code> on a line of its own when configured', async () => {
      await start({ sms: { webotp_domain: 'Login.Example.com' } });
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      const [code] = gateway.codes();
      expect(gateway.sent[0]!.body).toBe(`${italianSms(code!)}\n@login.example.com #${code}`);
    });

    it('adds it to the English SMS too', async () => {
      await start({ sms: { webotp_domain: 'login.example.com' } });
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE, locale: 'en' });
      const [code] = gateway.codes();
      expect(gateway.sent[0]!.body.split('\n')).toEqual([englishSms(code!), `@login.example.com #${code}`]);
    });

    it('sends no such line by default', async () => {
      await start();
      const gateway = smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      expect(gateway.sent[0]!.body).toBe(italianSms(gateway.codes()[0]!));
      expect(gateway.sent[0]!.body).not.toContain('\n');
    });

    it('keeps it out of the mail', async () => {
      await start({ sms: { webotp_domain: 'login.example.com' } });
      await app.post('otp_generate', { uid: EMAIL });
      expect(smtp.mails[0]!.text).not.toContain('login.example.com');
    });
  });

  describe('error texts', () => {
    it('answers an English text for locale en', async () => {
      await start();
      smsGateway();
      await app.post('otp_generate', { uid: PHONE, locale: 'en' });
      const again = await app.post('otp_generate', { uid: PHONE, locale: 'en' });
      expect(again.body).toEqual({
        success: false,
        error: 'Code already sent. Try again in 60 seconds.',
        data: { reason: 'already_sent', retry_after: 60, cooldown: 60, blocked: true },
      });
    });

    it('answers an English text to a request refused before validation ends, when it asked for en', async () => {
      await start();
      const res = await app.post('otp_generate', { locale: 'en' });
      expect(res.body).toMatchObject({
        success: false,
        error: 'Invalid request.',
        data: { reason: 'invalid_request' },
      });
    });

    it('answers English to Accept-Language en on an action without a locale field', async () => {
      await start();
      const res = await app.post('verify_otp', { uid: PHONE, otp_code: '123456' }).set('Accept-Language', 'en-US');
      expect(res.body).toEqual({ success: false, error: 'Invalid code.', data: { reason: 'invalid', valid: false } });
    });

    it('keeps the Italian texts by default, to the letter', async () => {
      await start();
      smsGateway();
      await app.post('otp_generate', { uid: PHONE });
      expect((await app.post('otp_generate', { uid: PHONE })).body.error).toBe(
        'OTP già inviato. Riprova tra 60 secondi.',
      );
      expect((await app.post('verify_otp', { uid: PHONE, otp_code: '12345x' })).body.error).toBe('OTP non valido.');
      expect(
        (await app.post('otp_generate', { uid: PHONE, locale: 'it' }).set('Accept-Language', 'en')).body.error,
      ).toBe('OTP già inviato. Riprova tra 60 secondi.');
    });

    it('ignores a locale field on an action that has none: its text follows Accept-Language only', async () => {
      await start();
      const res = await app.post('verify_otp', { uid: PHONE, otp_code: '123456', locale: 'en' });
      expect(res.body.error).toBe('OTP non valido.');
    });
  });
});
