import request from 'supertest';
import { createSmsFake } from '../../src/sandbox/sms';
import { createSmtpFake, parseMail } from '../../src/sandbox/smtp';
import { eventually } from '../support/eventually';
import { useSandboxApp } from '../support/sandbox-app';

describe('sandbox SMS gateway and SMTP server', () => {
  const app = useSandboxApp([createSmsFake, createSmtpFake]);

  it('points the SMS and mail configuration at the fakes', () => {
    expect(app.sandbox.config.sms.api_url).toBe(`${app.sandbox.baseUrl}/sms`);
    expect(app.sandbox.config.sms.api_key).not.toBe('');
    expect(app.sandbox.config.mail).toMatchObject({ host: '127.0.0.1', port: expect.any(Number) });
    expect(app.sandbox.config.mail.from_address).not.toBe('');
  });

  it('delivers an SMS code to the outbox that verify_otp accepts', async () => {
    const sent = await app.call('otp_generate', { uid: '+39 333 000 1111' });
    expect(sent.body.data.notified).toEqual({ email: false, sms: true, channel: 'sms' });
    const [sms] = app.sandbox.outbox.list('sms');
    expect(sms).toMatchObject({ channel: 'sms', to: '+393330001111', code: expect.stringMatching(/^\d{6}$/) });
    expect(sms!.body).toContain(sms!.code);
    const verified = await app.call('verify_otp', { email: '+393330001111', otp_code: sms!.code });
    expect(verified.body).toEqual({
      success: true,
      error: null,
      data: { valid: true, doi: null, access_token: null, proof: expect.any(String) },
    });
  });

  it('delivers a mail code to the outbox that verify_otp accepts', async () => {
    const sent = await app.call('otp_generate', { uid: 'anna@example.test' });
    expect(sent.body.data.notified).toEqual({ email: true, sms: false });
    // SMTP delivery completes a moment after the SMTP reply.
    const mail = await eventually(() => {
      const found = app.sandbox.outbox.list('email').find((m) => m.to === 'anna@example.test');
      expect(found).toBeDefined();
      return found!;
    });
    expect(mail).toMatchObject({ subject: 'Login: il tuo codice di verifica', code: expect.stringMatching(/^\d{6}$/) });
    const verified = await app.call('verify_otp', { email: 'anna@example.test', otp_code: mail.code });
    expect(verified.body.success).toBe(true);
  });

  it('refuses an SMS without the sandbox key, like a real gateway', async () => {
    const res = await request(app.sandbox.baseUrl)
      .post('/sms')
      .set('authorization', 'Bearer wrong')
      .send({ receiver: '+393330001111', body: 'x' });
    expect(res.status).toBe(401);
  });
});

describe('parseMail', () => {
  it('decodes an encoded subject and a base64 text part inside a multipart mail', () => {
    const raw = [
      'Subject: =?UTF-8?B?Q29kaWNlIMOo?=',
      'Content-Type: multipart/alternative; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('Il codice è 012345\r\nciao').toString('base64'),
      '--b1',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<p>Il codice =C3=A8 <b>012345</b></p>',
      '--b1--',
      '',
    ].join('\r\n');
    expect(parseMail(raw)).toEqual({
      subject: 'Codice è',
      text: 'Il codice è 012345\nciao',
      html: '<p>Il codice è <b>012345</b></p>',
    });
  });
});
