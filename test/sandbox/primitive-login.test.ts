import { createIdentityFake, sandboxSeedUsers } from '../../src/sandbox/identity';
import { createSmsFake } from '../../src/sandbox/sms';
import { createSmtpFake } from '../../src/sandbox/smtp';
import { useSandboxApp } from '../support/sandbox-app';

/*
 * The contract's typical sequences (docs/contract.md#typical-sequences) over the primitives, end to end on the sandbox with the guard on:
 * the code is read from the outbox as a person would, and each step carries the proof the
 * previous one answered.
 */

const mario = sandboxSeedUsers[0]!;

describe('primitive sequences on the sandbox', () => {
  const app = useSandboxApp([createIdentityFake, createSmsFake, createSmtpFake]);

  it('phone, user exists: search_user, otp_generate, verify_otp, search_user, access_token sets __utp', async () => {
    const before = await app.call('search_user', { phone: '+39 333 123 4567' });
    expect(before.body).toMatchObject({ success: true, meta: { found: true, has_otp_phone: true } });

    expect((await app.call('otp_generate', { uid: '+39 333 123 4567' })).body).toMatchObject({
      success: true,
      data: { notified: { sms: true, email: false } },
    });
    const code = app.codeFor('sms', '3331234567');
    expect(code).toMatch(/^\d{6}$/);

    const verified = await app.call('verify_otp', { email: '+393331234567', otp_code: code });
    expect(verified.body).toMatchObject({
      success: true,
      data: { valid: true, doi: null, access_token: null, proof: expect.any(String) },
    });

    const found = await app.call('search_user', { phone: '+393331234567', proof: verified.body.data.proof });
    expect(found.body.meta).toMatchObject({ found: true, uid: mario.uid, email: mario.email });

    const token = await app.call('access_token', { uid: mario.uid, proof: found.body.data.proof });
    expect(token.body).toMatchObject({
      success: true,
      data: { access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]*$/) },
    });
    expect(String(token.headers['set-cookie'])).toContain(`__utp=${token.body.data.access_token}`);
  });

  it('refuses access_token without a proof, and a proof for another uid', async () => {
    expect((await app.call('access_token', { uid: mario.uid })).body.data.reason).toBe('proof_required');
    await app.call('otp_generate', { uid: 'giulia.bianchi@example.com' });
    const code = app.codeFor('email', 'giulia.bianchi@example.com');
    const verified = await app.call('verify_otp', { email: 'giulia.bianchi@example.com', otp_code: code });
    expect((await app.call('access_token', { uid: mario.uid, proof: verified.body.data.proof })).body.data.reason).toBe(
      'proof_required',
    );
  });

  it('registration: verify_otp with is_registration and uid confirms DOI and logs the new user in', async () => {
    const email = 'nuovo.utente@example.com';
    await app.call('otp_generate', { uid: email });
    const first = await app.call('verify_otp', { email, otp_code: app.codeFor('email', email) });
    const registered = await app.call('register', { email, send_otp: true, proof: first.body.data.proof });
    expect(registered.body).toMatchObject({
      success: true,
      data: { access_token: expect.any(String), uid: expect.any(String) },
    });
    const uid = registered.body.data.uid as string;

    const second = await app.call('verify_otp', {
      email,
      otp_code: app.codeFor('email', email),
      is_registration: true,
      uid,
      proof: registered.body.data.proof,
    });
    expect(second.body).toMatchObject({
      success: true,
      data: { valid: true, doi: expect.anything(), access_token: expect.any(String) },
    });
    expect(String(second.headers['set-cookie'])).toContain('__utp=');
    const profile = await app.call('get_user_email', { email, proof: second.body.data.proof });
    expect(profile.body).toMatchObject({ success: true, meta: { exists: true, uid } });
  });

  it('refuses DOI for a uid no proof links to, without spending the code', async () => {
    const email = 'altro.utente@example.com';
    await app.call('otp_generate', { uid: email });
    const code = app.codeFor('email', email);
    const refused = await app.call('verify_otp', { email, otp_code: code, is_registration: true, uid: mario.uid });
    expect(refused.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect((await app.call('verify_otp', { email, otp_code: code })).body.data.valid).toBe(true);
  });
});
