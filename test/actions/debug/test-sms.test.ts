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
    expect(gateway.sent).toEqual([
      {
        receiver: '+393331234567',
        body: expect.stringContaining('123456'),
        sender: 'Login',
        authorization: `Bearer ${SMS_KEY}`,
      },
    ]);
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
        provider: 'gateway',
        providers: [{ provider: 'gateway', state: 'closed' }],
      },
      payload: { receiver: '*********567', sender: 'Login' },
    });
  });

  it("sends the sample in the reader's language: Accept-Language en gets the English template", async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    const gateway = smsGateway();
    await call({ phone: '333 123 4567' }).set('Accept-Language', 'en');
    await call({ phone: '333 123 4568' });
    expect(gateway.sent.map((m) => m.body)).toEqual([
      expect.stringContaining('your verification code is'),
      expect.stringContaining('il tuo codice di verifica'),
    ]);
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

  it('is refused with debug on and no internal key, sending nothing: debug opens no diagnostic', async () => {
    app = await startApp({ debug: true, security: { internal_key: INTERNAL } });
    const gateway = smsGateway();
    const res = await call({ to: '+393331234567' }, null);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(gateway.sent).toHaveLength(0);
  });

  it('reports an unconfigured gateway without calling anything', async () => {
    app = await startApp({ security: { internal_key: INTERNAL }, sms: { api_url: '' } });
    const res = await call({ phone: '+393331234567' });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'channel_not_configured', configured: false, sent: false, outcome: 'not_configured' },
    });
  });

  it('reports a gateway failure with its status', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    smsGateway(502);
    const res = await call({ phone: '+393331234567' });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'delivery_failed', sent: false, outcome: 'failed', upstream_status: 502 },
    });
  });

  it('refuses a missing or unparseable phone', async () => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    expect((await call({})).body.data).toMatchObject({ reason: 'invalid_request', issues: [{ path: 'phone' }] });
    expect((await call({ phone: 'abc' })).body.data).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: 'phone' }],
    });
  });

  it.each([
    ['an Italian premium-rate number', '+39899123456', 'phone_not_mobile'],
    ['a UK premium-rate number', '+449091234567', 'region_not_allowed'],
    ['a US premium-rate number', '+19005550123', 'region_not_allowed'],
    ['an Italian landline', '+390212345678', 'phone_not_mobile'],
  ])('refuses %s as a real send would, even with the internal key, sending nothing', async (_what, phone, reason) => {
    app = await startApp({ security: { internal_key: INTERNAL } });
    const gateway = smsGateway();
    const res = await call({ phone });
    expect(res.body).toMatchObject({ success: false, data: { reason } });
    expect(gateway.sent).toHaveLength(0);
  });

  it('counts against the phone per-recipient cap, as codes do', async () => {
    app = await startApp({ security: { internal_key: INTERNAL }, rate_limits: { sends_per_recipient: 2 } });
    const gateway = smsGateway();
    expect((await call({ phone: '+393331234567' })).body.success).toBe(true);
    expect((await call({ phone: '+393331234567' })).body.success).toBe(true);
    expect((await call({ phone: '+393331234567' })).body).toMatchObject({
      success: false,
      data: { reason: 'rate_limited', limit: 'sends_per_recipient' },
    });
    expect(gateway.sent).toHaveLength(2);
  });
});
