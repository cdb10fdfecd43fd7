import { useNock } from '../../support/nock';
import { intercept, paths } from '../identity/support';
import { smsGateway, useSmtp } from '../otp/harness';
import { flowsApp, MARIO, searchReply } from './support';

/* The signed proofs that carry a journey between requests: refused when forged, stale, of the wrong kind or for someone else. */
describe('Fe* proofs', () => {
  useNock();
  const smtp = useSmtp();

  async function phoneProof(app: ReturnType<typeof flowsApp>) {
    const sms = smsGateway();
    intercept('POST', paths.search, 200, searchReply());
    await app.call('FeLogin', { identifier: MARIO.phone });
    const verified = await app.call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: sms.codes()[0] });
    return verified.body.data.phone_proof as string;
  }

  it('refuses a tampered proof with invalid_proof and sends no code', async () => {
    const app = flowsApp(smtp.port());
    const proof = await phoneProof(app);
    const [prefix, body, mac] = proof.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = `${prefix}.${Buffer.from(JSON.stringify({ ...claims, phone: '+393339876543' })).toString('base64url')}.${mac}`;
    const res = await app.call('FeRegister', {
      phase: 'email_otp',
      email: 'eve@example.com',
      phone: '+393339876543',
      phone_proof: forged,
    });
    expect(res.body).toEqual({
      success: false,
      error: 'Sessione non valida o scaduta. Ricomincia l’accesso.',
      data: { reason: 'invalid_proof', why: 'signature' },
    });
    expect(smtp.mails).toHaveLength(0);
  });

  it('refuses an expired proof with invalid_proof', async () => {
    let now = Date.UTC(2030, 0, 15, 10, 0, 0);
    const app = flowsApp(smtp.port(), {}, { now: () => now });
    const proof = await phoneProof(app);
    now += 901_000;
    const res = await app.call('FeRegister', {
      phase: 'email_otp',
      email: 'nina@example.com',
      phone: MARIO.phone,
      phone_proof: proof,
    });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'expired' } });
  });

  it('refuses a genuine proof in the wrong field (its kind does not match)', async () => {
    const app = flowsApp(smtp.port());
    const proof = await phoneProof(app);
    const res = await app.call('FeRegister', { phase: 'register', email: 'nina@example.com', register_proof: proof });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'kind' } });
  });

  it('refuses a phone_proof used for another phone (invalid_proof naming the field)', async () => {
    const app = flowsApp(smtp.port());
    const proof = await phoneProof(app);
    const res = await app.call('FeRegister', {
      phase: 'email_otp',
      email: 'nina@example.com',
      phone: '+393339876543',
      phone_proof: proof,
    });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', field: 'phone' } });
    expect(smtp.mails).toHaveLength(0);
  });

  it('refuses a pending_proof of one email for another email’s code', async () => {
    const app = flowsApp(smtp.port());
    const started = await app.call('FeRegister', { phase: 'email_otp', email: 'owner@example.com' });
    await app.call('FeRegister', { phase: 'email_otp', email: 'eve@example.com' });
    const eveCode = smtp.codes()[1];
    const res = await app.call('FeVerifyOtp', {
      flow: 'email_register',
      email: 'eve@example.com',
      otp_code: eveCode,
      pending_proof: started.body.data.pending_proof,
    });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', field: 'email' } });
  });
});
