import nock from 'nock';
import { smsGateway, startApp, useNock, type Harness } from './harness';

const PHONE = '+393331234567';

describe('otp_verify_local', () => {
  useNock();
  let app: Harness;
  let code: string;
  beforeEach(async () => {
    app = await startApp();
    const gateway = smsGateway();
    await app.post('otp_generate', { uid: PHONE });
    nock.cleanAll();
    code = gateway.codes()[0]!;
  });
  afterEach(async () => {
    await app.close();
  });

  it('accepts the right code with valid true and reason ok', async () => {
    const res = await app.post('otp_verify_local', { uid: PHONE, otp_code: code });
    expect(res.body).toEqual({ success: true, error: null, data: { valid: true, reason: 'ok' } });
  });

  it('answers OTP non valido. to a wrong code', async () => {
    const res = await app.post('otp_verify_local', { uid: PHONE, otp_code: '1' });
    expect(res.body).toEqual({ success: false, error: 'OTP non valido.', data: { reason: 'invalid', valid: false } });
  });

  it('answers OTP scaduto. after the lifetime', async () => {
    app.tick(300_001);
    const res = await app.post('otp_verify_local', { uid: PHONE, otp_code: code });
    expect(res.body).toEqual({
      success: false,
      error: 'OTP scaduto. Richiedi un nuovo codice.',
      data: { reason: 'expired', valid: false },
    });
  });

  it('consumes the code like verify_otp does', async () => {
    await app.post('otp_verify_local', { uid: PHONE, otp_code: code });
    expect((await app.post('verify_otp', { email: PHONE, otp_code: code })).body.data.reason).toBe('invalid');
  });

  it('requires uid and otp_code', async () => {
    const res = await app.post('otp_verify_local', {});
    expect(res.body.data.reason).toBe('invalid_request');
    expect(res.body.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(['otp_code', 'uid']);
  });
});
