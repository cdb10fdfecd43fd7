import { apiError } from '../../../src/core/errors';
import type { OtpService } from '../../../src/domain/otp/service';
import { verifyProof } from '../../../src/domain/proofs';
import { fixture, identityApp, identityConfig, intercept, paths, setCookies, useNock } from './support';

const email = 'nuovo.utente@example.com';
const newUid = 'PNIn3wUs3r0001';
const { access_token: token, pub_id: pubId } = fixture<{ access_token: string; pub_id: string }>('register');

function fakeOtp(result: Partial<Awaited<ReturnType<OtpService['generate']>>> | Error) {
  const calls: unknown[] = [];
  const otp = {
    generate: async (_ctx: unknown, request: unknown) => {
      calls.push(request);
      if (result instanceof Error) throw result;
      return {
        resent: false,
        retry_after: 60,
        cooldown: 60,
        expires_in: 300,
        notified: { email: true, sms: false },
        ...result,
      };
    },
    spendProof: async () => true,
    unspendProof: async () => {},
    accountClaimedAt: async () => null,
  } as unknown as OtpService;
  return { otp, calls };
}

describe('register', () => {
  useNock();

  it('refuses without a verification proof, before calling the provider', async () => {
    const { call } = identityApp();
    const { scope } = intercept('POST', paths.register, 200, fixture('register'));
    const res = await call('register', { email, send_otp: false });
    expect(res.body.data.reason).toBe('proof_required');
    expect(scope.isDone()).toBe(false);
  });

  it('registers with a proof for the email, stores the token and answers a proof binding the new uid', async () => {
    const { call, proof, deps } = identityApp();
    const { scope, seen } = intercept('POST', paths.register, 200, fixture('register'));
    const res = await call('register', {
      email,
      consents: { terms_conditions: true },
      send_otp: false,
      proof: proof({ email }),
    });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query.consents).toBe('{"terms_conditions":true}');
    expect(res.body.data).toMatchObject({ access_token: token, pub_id: pubId, uid: newUid, otp_sent: false });
    expect(res.body.data.otp).toBeUndefined();
    expect(setCookies(res)[0]).toMatch(/^__utp=/);
    expect(verifyProof(deps.secret, res.body.data.proof, deps.now())).toMatchObject({
      email,
      uid: newUid,
      linked: ['uid'],
    });
  });

  it('registers with a proof for the phone given, and the new proof keeps that verified phone', async () => {
    const { call, proof, deps } = identityApp();
    intercept('POST', paths.register, 200, fixture('register'));
    const res = await call('register', {
      email,
      phone: '333 123 4567',
      send_otp: false,
      proof: proof({ phone: '+393331234567' }),
    });
    expect(verifyProof(deps.secret, res.body.data.proof, deps.now())).toMatchObject({
      phone: '+393331234567',
      uid: newUid,
      email,
      linked: ['email', 'uid'],
    });
  });

  it('refuses a phone proof when the request names no phone', async () => {
    const { call, proof } = identityApp();
    const res = await call('register', { email, send_otp: false, proof: proof({ phone: '+393331234567' }) });
    expect(res.body.data.reason).toBe('proof_required');
  });

  it('sends an OTP to the new email and shows the code only when otp.debug is on', async () => {
    const { otp, calls } = fakeOtp({ otp: '123456' });
    const { call, proof } = identityApp(identityConfig({ otp: { debug: true } }), { otp });
    intercept('POST', paths.register, 200, fixture('register'));
    const res = await call('register', { email, proof: proof({ email }) });
    expect(calls).toEqual([expect.objectContaining({ key: email, email })]);
    expect(res.body.data).toMatchObject({ otp: '123456', otp_sent: true });
  });

  it('keeps the registration when the OTP cannot be sent, and says why', async () => {
    const { otp } = fakeOtp(apiError('channel_not_configured'));
    const { call, proof } = identityApp(identityConfig(), { otp });
    intercept('POST', paths.register, 200, fixture('register'));
    const res = await call('register', { email, proof: proof({ email }) });
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({ access_token: token, otp_sent: false, otp_reason: 'channel_not_configured' });
  });
});
