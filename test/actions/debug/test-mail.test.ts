import { mailConfig, startApp, useNock, useSmtp, type Harness } from '../otp/harness';

const INTERNAL = 'internal-key-for-tests';

describe('test_mail', () => {
  useNock();
  const smtp = useSmtp();
  let app: Harness;
  afterEach(async () => {
    await app.close();
  });
  const call = (body: unknown, internalKey: string | null = INTERNAL) => {
    const req = app.post('test_mail', body);
    return internalKey ? req.set('x-internal-key', internalKey) : req;
  };

  it('sends the OTP mail with a sample code and reports what was sent', async () => {
    app = await startApp({ ...mailConfig(smtp.port()), security: { internal_key: INTERNAL } });
    const res = await call({ to: 'mario@example.test' });
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]).toMatchObject({
      to: ['mario@example.test'],
      subject: '[test] Login: il tuo codice di verifica',
    });
    expect(smtp.codes()).toEqual(['123456']);
    expect(res.body).toMatchObject({
      success: true,
      error: null,
      data: {
        channel: 'email',
        configured: true,
        sent: true,
        outcome: 'sent',
        to: 'm***@example.test',
        smtp: { host: '127.0.0.1', port: smtp.port(), from: 'otp@example.test' },
      },
      payload: { to: 'm***@example.test', subject: '[test] Login: il tuo codice di verifica' },
    });
  });

  it("sends the sample in the reader's language: Accept-Language en gets the English mail", async () => {
    app = await startApp({ ...mailConfig(smtp.port()), security: { internal_key: INTERNAL } });
    await call({ to: 'mario@example.test' }).set('Accept-Language', 'en');
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]!.subject).toMatch(/^\[test\] Login: your verification code/);
  });

  it('sends to mail.from_address when no recipient is given', async () => {
    app = await startApp({ ...mailConfig(smtp.port()), security: { internal_key: INTERNAL } });
    await call({});
    expect(smtp.mails[0]!.to).toEqual(['otp@example.test']);
  });

  it('never shows the SMTP password', async () => {
    app = await startApp({
      ...mailConfig(smtp.port()),
      security: { internal_key: INTERNAL },
      mail: { ...mailConfig(smtp.port()).mail, user: '', pass: 'smtp-password-1234' },
    });
    const res = await call({ to: 'mario@example.test' });
    expect(JSON.stringify(res.body)).not.toContain('smtp-password-1234');
  });

  it('is refused without the internal key, debug on or not, mailing nothing', async () => {
    app = await startApp({ ...mailConfig(smtp.port()), debug: true, security: { internal_key: INTERNAL } });
    const res = await call({ to: 'mario@example.test' }, null);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(smtp.mails).toHaveLength(0);
  });

  it('reports an unconfigured channel', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    const res = await call({ to: 'mario@example.test' });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'channel_not_configured', configured: false, outcome: 'not_configured' },
    });
  });

  it('reports an SMTP failure as delivery_failed', async () => {
    app = await startApp({
      security: { internal_key: INTERNAL },
      mail: { host: '127.0.0.1', port: 1, from_address: 'otp@example.test', timeout_seconds: 2 },
    });
    const res = await call({ to: 'mario@example.test' });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'delivery_failed', sent: false, outcome: 'failed' },
    });
  });

  it('refuses a malformed recipient', async () => {
    app = await startApp({ ...mailConfig(smtp.port()), security: { internal_key: INTERNAL } });
    expect((await call({ to: 'nope' })).body.data).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: 'to' }],
    });
  });
});
