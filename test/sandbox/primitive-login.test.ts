import pino from 'pino';
import request from 'supertest';
import type { Deps } from '../../src/domain/deps';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { createIdentityFake, sandboxSeedUsers } from '../../src/sandbox/identity';
import { createSmsFake } from '../../src/sandbox/sms';
import { createSmtpFake } from '../../src/sandbox/smtp';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * The contract's typical sequences (docs/contract.md#typical-sequences) over the primitives, end to end on the sandbox with the guard on:
 * the code is read from the outbox as a person would, and each step carries the proof the
 * previous one answered.
 */

const log = pino({ level: 'silent' });
const mario = sandboxSeedUsers[0]!;

describe('primitive sequences on the sandbox', () => {
  let sandbox: Sandbox;
  let deps: Deps;
  let server: ReturnType<ReturnType<typeof testApp>['callback']>;
  const call = (action: string, body: Record<string, unknown>) => request(server).post(`/?action=${action}`).send(body);
  const lastCode = (channel: 'sms' | 'email', to: string) => sandbox.outbox.list(channel).find((m) => m.to.includes(to))?.code;

  beforeAll(async () => {
    sandbox = await startSandbox(testConfig(), log, [createIdentityFake, createSmsFake, createSmtpFake]);
    deps = testDeps(sandbox.config);
    server = testApp(deps).callback();
  });
  afterAll(async () => {
    await deps.close();
    await sandbox.close();
  });

  it('phone, user exists: search_user, otp_generate, verify_otp, search_user, access_token sets __utp', async () => {
    const before = await call('search_user', { phone: '+39 333 123 4567' });
    expect(before.body).toMatchObject({ success: true, meta: { found: true, has_otp_phone: true } });

    expect((await call('otp_generate', { uid: '+39 333 123 4567' })).body).toMatchObject({ success: true, data: { notified: { sms: true, email: false } } });
    const code = lastCode('sms', '3331234567');
    expect(code).toMatch(/^\d{6}$/);

    const verified = await call('verify_otp', { email: '+393331234567', otp_code: code });
    expect(verified.body).toMatchObject({ success: true, data: { valid: true, doi: null, access_token: null, proof: expect.any(String) } });

    const found = await call('search_user', { phone: '+393331234567', proof: verified.body.data.proof });
    expect(found.body.meta).toMatchObject({ found: true, uid: mario.uid, email: mario.email });

    const token = await call('access_token', { uid: mario.uid, proof: found.body.data.proof });
    expect(token.body).toMatchObject({ success: true, data: { access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]*$/) } });
    expect(String(token.headers['set-cookie'])).toContain(`__utp=${token.body.data.access_token}`);
  });

  it('refuses access_token without a proof, and a proof for another uid', async () => {
    expect((await call('access_token', { uid: mario.uid })).body.data.reason).toBe('proof_required');
    await call('otp_generate', { uid: 'giulia.bianchi@example.com' });
    const code = lastCode('email', 'giulia.bianchi@example.com');
    const verified = await call('verify_otp', { email: 'giulia.bianchi@example.com', otp_code: code });
    expect((await call('access_token', { uid: mario.uid, proof: verified.body.data.proof })).body.data.reason).toBe('proof_required');
  });

  it('registration: verify_otp with is_registration and uid confirms DOI and logs the new user in', async () => {
    const email = 'nuovo.utente@example.com';
    await call('otp_generate', { uid: email });
    const first = await call('verify_otp', { email, otp_code: lastCode('email', email) });
    const registered = await call('register', { email, send_otp: true, proof: first.body.data.proof });
    expect(registered.body).toMatchObject({ success: true, data: { access_token: expect.any(String), uid: expect.any(String) } });
    const uid = registered.body.data.uid as string;

    const second = await call('verify_otp', { email, otp_code: lastCode('email', email), is_registration: true, uid, proof: registered.body.data.proof });
    expect(second.body).toMatchObject({ success: true, data: { valid: true, doi: expect.anything(), access_token: expect.any(String) } });
    expect(String(second.headers['set-cookie'])).toContain('__utp=');
    const profile = await call('get_user_email', { email, proof: second.body.data.proof });
    expect(profile.body).toMatchObject({ success: true, meta: { exists: true, uid } });
  });

  it('refuses DOI for a uid no proof links to, without spending the code', async () => {
    const email = 'altro.utente@example.com';
    await call('otp_generate', { uid: email });
    const code = lastCode('email', email);
    const refused = await call('verify_otp', { email, otp_code: code, is_registration: true, uid: mario.uid });
    expect(refused.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect((await call('verify_otp', { email, otp_code: code })).body.data.valid).toBe(true);
  });
});
