import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { useSandboxApp } from '../support/sandbox-app';

/*
 * The optimised actions end to end on the sandbox (every fake upstream), as a person would use
 * them with curl: codes read from the outbox, each request carrying the proof field the
 * previous answer named. Only Fe* actions.
 */

const mario = sandboxSeedUsers[0]!;
const giulia = sandboxSeedUsers[1]!;

describe('Fe* journeys on the sandbox', () => {
  const app = useSandboxApp();
  const ingestedFor = (uid: string) => app.sandbox.outbox.list('collector').filter((m) => m.to === uid);

  it('logs the seeded user in by phone: 14, then 90 with a token, and the collector receives the login', async () => {
    const started = await app.call('FeLogin', { identifier: '+39 333 123 4567' });
    expect(started.body.data).toMatchObject({ next_step: 14, flow: 'phone' });
    const code = app.codeFor('sms', '+393331234567');
    expect(code).toMatch(/^\d{6}$/);

    const done = await app.call('FeVerifyOtp', { flow: 'phone', phone: '+393331234567', otp_code: code });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      screen: 'success',
      uid: mario.uid,
      access_token: expect.any(String),
    });
    expect(String(done.headers['set-cookie'])).toContain(`__utp=${done.body.data.access_token}`);
    await app.deps.loginIngest.drain(2000);
    expect(ingestedFor(mario.uid)).toHaveLength(1);

    // The step-90 proof vouches for the uid, but no code was verified for the email: it cannot confirm DOI.
    const doi = await app.call('doi_confirm', { uid: mario.uid, proof: done.body.data.proof });
    expect(doi.body.data.reason).toBe('proof_required');
    expect((await app.call('get_user', { uid: mario.uid, proof: done.body.data.proof })).body.meta.exists).toBe(true);
  });

  it('logs the seeded user in by email: 33, then 90 (the account has a phone)', async () => {
    expect((await app.call('FeLogin', { identifier: mario.email })).body.data).toMatchObject({
      next_step: 33,
      flow: 'email',
    });
    const done = await app.call('FeVerifyOtp', {
      flow: 'email',
      email: mario.email,
      otp_code: app.codeFor('email', mario.email),
    });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      flow: 'email_with_phone',
      uid: mario.uid,
      access_token: expect.any(String),
    });
  });

  it('sends an account without a phone to 61, then adds one through 62 and logs in', async () => {
    await app.call('FeLogin', { identifier: giulia.email });
    const verified = await app.call('FeVerifyOtp', {
      flow: 'email',
      email: giulia.email,
      otp_code: app.codeFor('email', giulia.email),
    });
    expect(verified.body.data).toMatchObject({
      next_step: 61,
      flow: 'email_add_phone',
      uid: giulia.uid,
      proof: expect.any(String),
    });

    const added = await app.call('FeAddPhone', {
      flow: 'email_add_phone',
      phone: '+39 333 555 0101',
      uid: giulia.uid,
      email: giulia.email,
      proof: verified.body.data.proof,
    });
    expect(added.body.data).toMatchObject({ next_step: 62, screen: 'otp_phone', pending_proof: expect.any(String) });
    const done = await app.call('FeVerifyOtp', {
      flow: 'email_add_phone',
      phone: '+393335550101',
      uid: giulia.uid,
      otp_code: app.codeFor('sms', '+393335550101'),
      pending_proof: added.body.data.pending_proof,
    });
    expect(done.body.data).toMatchObject({ next_step: 90, uid: giulia.uid, access_token: expect.any(String) });
  });

  it('registers a new user by email, adds a phone, then completes the profile', async () => {
    const email = 'sara.neri@example.com';
    const phone = '+393337770707';
    const emailOtp = await app.call('FeRegister', {
      phase: 'email_otp',
      email,
      otp: true,
      consents: { terms_conditions: true },
    });
    expect(emailOtp.body.data).toMatchObject({
      next_step: 23,
      flow: 'email_register',
      pending_proof: expect.any(String),
    });

    const verified = await app.call('FeVerifyOtp', {
      flow: 'email_register',
      email,
      otp_code: app.codeFor('email', email),
      pending_proof: emailOtp.body.data.pending_proof,
    });
    expect(verified.body.data).toMatchObject({ next_step: 37, register_proof: expect.any(String) });

    const registered = await app.call('FeRegister', {
      phase: 'register',
      email,
      first_name: 'Sara',
      last_name: 'Neri',
      consents: { terms_conditions: true },
      register_proof: verified.body.data.register_proof,
    });
    expect(registered.body.data).toMatchObject({
      next_step: 90,
      flow: 'email_register_phone',
      uid: expect.any(String),
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    const uid = registered.body.data.uid as string;

    const added = await app.call('FeAddPhone', {
      flow: 'email_register_phone',
      phone,
      uid,
      email,
      proof: registered.body.data.proof,
    });
    expect(added.body.data).toMatchObject({
      next_step: 62,
      screen: 'otp_phone',
      otp: expect.objectContaining({ notified: { sms: true, email: false, channel: 'sms' } }),
    });
    const phoneDone = await app.call('FeVerifyOtp', {
      flow: 'email_register_phone',
      phone,
      uid,
      email,
      otp_code: app.codeFor('sms', phone),
      pending_proof: added.body.data.pending_proof,
    });
    expect(phoneDone.body.data).toMatchObject({ next_step: 90, uid, proof: expect.any(String) });

    const profile = await app.call('FeUpdateProfile', {
      uid,
      city: 'Bologna',
      birth_date: '1992-06-15',
      otp_phone: phone,
      proof: phoneDone.body.data.proof,
    });
    expect(profile.body.data).toMatchObject({
      next_step: 90,
      done: true,
      screen: 'success',
      access_token: expect.any(String),
    });

    await app.deps.loginIngest.drain(2000);
    expect(ingestedFor(uid)).toHaveLength(3);

    // The saved phone now logs into the new account.
    expect((await app.call('FeLogin', { identifier: phone })).body.data.next_step).toBe(14);
    const phoneLogin = await app.call('FeVerifyOtp', { flow: 'phone', phone, otp_code: app.codeFor('sms', phone) });
    expect(phoneLogin.body.data).toMatchObject({ next_step: 90, uid });
  });
});
