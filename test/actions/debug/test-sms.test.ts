import { SMS_KEY, smsGateway, startApp, useNock, type Harness } from '../otp/harness';

const INTERNAL = 'internal-key-for-tests';

describe('test_sms', () => {
  useNock();
  let app: Harness;
  afterEach(async () => {
    await app.close();
  });
  const call = (body: unknown, internalKey: string | null = INTERNAL) => {
    const req = app.post('test_sms', body);
    return internalKey ? req.set('x-internal-key', internalKey) : req;
  };

  it('sends the OTP template with a sample code to the E.164 phone and reports it', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    const gateway = smsGateway();
    const res = await call({ phone: '333 123 4567' });
    expect(gateway.sent).toEqual([{ receiver: '+393331234567', body: expect.stringContaining('123456'), sender: 'Login', authorization: `Bearer ${SMS_KEY}` }]);
    expect(res.body).toMatchObject({
      success: true,
      error: null,
      data: {
        channel: 'sms',
        configured: true,
        sent: true,
        outcome: 'sent',
        to: '*********567',
        upstream_status: 200,
        gateway: { url: 'https://sms.example.test/v1/send', api_key: '***', sender: 'Login' },
      },
      payload: { receiver: '*********567', sender: 'Login' },
    });
  });

  it('sends the sample in the reader\'s language: Accept-Language en gets the English template', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    const gateway = smsGateway();
    await call({ phone: '333 123 4567' }).set('Accept-Language', 'en');
    await call({ phone: '333 123 4568' });
    expect(gateway.sent.map((m) => m.body)).toEqual([expect.stringContaining('your verification code is'), expect.stringContaining('il tuo codice di verifica')]);
  });

  it('never shows the gateway key or the full phone', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    smsGateway();
    const text = JSON.stringify((await call({ phone: '+393331234567' })).body);
    expect(text).not.toContain(SMS_KEY);
    expect(text).not.toContain('3331234567');
  });

  it('is refused without debug or the internal key', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    const gateway = smsGateway();
    const res = await call({ phone: '+393331234567' }, 'wrong-key');
    expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(gateway.sent).toHaveLength(0);
  });

  it('is open when debug is on', async () => {
    app = await startApp({ debug: true });
    smsGateway();
    expect((await call({ to: '+393331234567' }, null)).body.data.outcome).toBe('sent');
  });

  it('reports an unconfigured gateway without calling anything', async () => {
    app = await startApp({ debug: true, sms: { api_url: '' } });
    const res = await call({ phone: '+393331234567' }, null);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'channel_not_configured', configured: false, sent: false, outcome: 'not_configured' } });
  });

  it('reports a gateway failure with its status', async () => {
    app = await startApp({ debug: true });
    smsGateway(502);
    const res = await call({ phone: '+393331234567' }, null);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'delivery_failed', sent: false, outcome: 'failed', upstream_status: 502 } });
  });

  it('refuses a missing or unparseable phone', async () => {
    app = await startApp({ debug: true });
    expect((await call({}, null)).body.data).toMatchObject({ reason: 'invalid_request', issues: [{ path: 'phone' }] });
    expect((await call({ phone: 'abc' }, null)).body.data).toMatchObject({ reason: 'invalid_request', issues: [{ path: 'phone' }] });
  });
});
