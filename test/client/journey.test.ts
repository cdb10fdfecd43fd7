import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createClient, createJourney, type Client } from '../../client/src';
import type { Deps } from '../../src/domain/deps';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { SANDBOX_PASSWORD, sandboxSeedUsers } from '../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * The typed client against the real app over HTTP, on the sandbox: a journey helper drives the
 * Fe* actions with only what a user types (identifier, code, phone, profile fields); codes are
 * read from the sandbox outbox. Everything else (flow, proofs, uid, identifiers) the helper
 * carries from answer to answer.
 */

const mario = sandboxSeedUsers[0]!;
const giulia = sandboxSeedUsers[1]!;

let sandbox: Sandbox;
let deps: Deps;
let server: Server;
let client: Client;
const codeFor = (channel: 'sms' | 'email', to: string) =>
  sandbox.outbox.list(channel).find((m) => m.to.includes(to))?.code;

beforeAll(async () => {
  sandbox = await startSandbox(testConfig(), pino({ level: 'silent' }));
  deps = testDeps(sandbox.config);
  server = testApp(deps).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await deps.close();
  await sandbox.close();
});

describe('the journey helper', () => {
  it('logs in by phone: 14, then 90 with a token, carrying flow and phone', async () => {
    const journey = createJourney(client);
    const started = await journey.login({ identifier: '+39 333 123 4567' });
    expect(started).toMatchObject({ success: true, data: { next_step: 14, flow: 'phone' } });
    expect(journey.state).toMatchObject({ step: 14, flow: 'phone', phone: '+39 333 123 4567' });

    const done = await journey.verifyOtp({ otp_code: codeFor('sms', '+393331234567')! });
    expect(done).toMatchObject({
      success: true,
      data: { next_step: 90, screen: 'success', done: true, uid: mario.uid, access_token: expect.any(String) },
    });
    expect(journey.state).toMatchObject({
      step: 90,
      done: true,
      uid: mario.uid,
      proofs: { proof: expect.any(String) },
    });
  });

  it('keeps the step after a wrong code, and the right code still logs in', async () => {
    const journey = createJourney(client);
    await journey.login({ identifier: mario.email });
    const code = codeFor('email', mario.email)!;
    const wrong = await journey.verifyOtp({ otp_code: code === '000000' ? '111111' : '000000' });
    expect(wrong).toMatchObject({
      success: false,
      error: 'OTP non valido.',
      data: { reason: 'invalid', valid: false },
    });
    expect(journey.state).toMatchObject({ step: 33, flow: 'email' });

    const done = await journey.verifyOtp({ otp_code: code });
    expect(done).toMatchObject({ success: true, data: { next_step: 90, flow: 'email_with_phone', uid: mario.uid } });
  });

  it('walks the add-phone steps (61, 62) and saves the profile with the proof each answer hands out', async () => {
    const journey = createJourney(client);
    await journey.login({ identifier: giulia.email });
    const verified = await journey.verifyOtp({ otp_code: codeFor('email', giulia.email)! });
    expect(verified).toMatchObject({
      success: true,
      data: { next_step: 61, flow: 'email_add_phone', uid: giulia.uid },
    });

    const added = await journey.addPhone({ phone: '+39 333 555 0202' });
    expect(added).toMatchObject({
      success: true,
      data: { next_step: 62, screen: 'otp_phone', pending_proof: expect.any(String) },
    });
    const done = await journey.verifyOtp({ otp_code: codeFor('sms', '+393335550202')! });
    expect(done).toMatchObject({
      success: true,
      data: { next_step: 90, uid: giulia.uid, access_token: expect.any(String) },
    });

    const firstProof = journey.state.proofs.proof;
    const saved = await journey.updateProfile({ city: 'Torino' });
    expect(saved).toMatchObject({ success: true, data: { next_step: 90, done: true } });
    // The proof sent was spent; the helper carries the fresh one, so a second change goes through.
    expect(journey.state.proofs.proof).not.toBe(firstProof);
    expect(await journey.updateProfile({ city: 'Milano' })).toMatchObject({ success: true, data: { next_step: 90 } });
  });

  it('keeps the phone on file at 65 for the phone registrant who proves it (the seeded Elena): the SMS code, then 90', async () => {
    const elena = sandboxSeedUsers[3]!;
    const journey = createJourney(client);
    await journey.login({ identifier: elena.email });
    const asked = await journey.verifyOtp({ otp_code: codeFor('email', elena.email)! });
    expect(asked).toMatchObject({
      success: true,
      data: {
        next_step: 65,
        flow: 'email_with_phone',
        uid: elena.uid,
        phone_hint: '+39 *******606',
        pending_proof: expect.any(String),
      },
    });
    expect(journey.state).toMatchObject({ step: 65, phoneHint: '+39 *******606' });
    await expect(journey.resend()).rejects.toThrow('step 65 has no resend');

    const done = await journey.verifyOtp({ otp_code: codeFor('sms', '+393336660606')! });
    expect(done).toMatchObject({
      success: true,
      data: { next_step: 90, done: true, uid: elena.uid, access_token: expect.any(String) },
    });
    expect(journey.state.phoneHint).toBeNull();
  });

  it('declines the phone on file at 65 and adds the user’s own: 61, 62, 90', async () => {
    // Seeded: a phone registrant typed Francesca's email (never confirmed); their phone is on the account.
    const francesca = sandboxSeedUsers[4]!;
    const { email, uid } = francesca;
    const journey = createJourney(client);
    expect(await journey.login({ identifier: email })).toMatchObject({ success: true, data: { next_step: 33 } });
    expect(await journey.verifyOtp({ otp_code: codeFor('email', email)! })).toMatchObject({
      success: true,
      data: { next_step: 65, phone_hint: '+39 *******707' },
    });
    const declined = await journey.declinePhone();
    expect(declined).toMatchObject({
      success: true,
      data: { next_step: 61, flow: 'email_add_phone', uid, proof: expect.any(String) },
    });
    await expect(journey.declinePhone()).rejects.toThrow('only at step 65');

    expect(await journey.addPhone({ phone: '+39 333 666 0808' })).toMatchObject({
      success: true,
      data: { next_step: 62 },
    });
    const done = await journey.verifyOtp({ otp_code: codeFor('sms', '+393336660808')! });
    expect(done).toMatchObject({ success: true, data: { next_step: 90, uid, access_token: expect.any(String) } });
  });

  it('registers by email (23, 37), then 90 with a token', async () => {
    const journey = createJourney(client);
    const email = 'client.journey@example.com';
    const sent = await journey.register({ phase: 'email_otp', email, otp: true, consents: { terms_conditions: true } });
    expect(sent).toMatchObject({ success: true, data: { next_step: 23, flow: 'email_register' } });
    const verified = await journey.verifyOtp({ otp_code: codeFor('email', email)! });
    expect(verified).toMatchObject({ success: true, data: { next_step: 37, register_proof: expect.any(String) } });
    const registered = await journey.register({
      phase: 'register',
      first_name: 'Clara',
      last_name: 'Rossi',
      consents: { terms_conditions: true },
    });
    expect(registered).toMatchObject({
      success: true,
      data: { next_step: 90, access_token: expect.any(String), uid: expect.any(String) },
    });
  });

  it('logs in with the password at 60, keeping the proof of the login', async () => {
    const journey = createJourney(client);
    expect(await journey.login({ identifier: mario.email, method: 'password' })).toMatchObject({
      success: true,
      data: { next_step: 60 },
    });
    const done = await journey.password(SANDBOX_PASSWORD);
    expect(done).toMatchObject({ success: true });
    expect(journey.state.proofs.proof).toEqual(expect.any(String));
  });

  it('cannot reuse a spent proof: an explicit field wins over the carried one, and the service refuses it', async () => {
    const journey = createJourney(client);
    await journey.login({ identifier: mario.email });
    await journey.verifyOtp({ otp_code: codeFor('email', mario.email)! });
    const spent = journey.state.proofs.proof!;
    expect(await journey.updateProfile({ city: 'Roma' })).toMatchObject({ success: true });
    const replay = await journey.updateProfile({ city: 'Napoli', proof: spent });
    expect(replay).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
  });

  it('resends the current code with the request that sent it: refused within the cooldown, the step unchanged', async () => {
    const journey = createJourney(client);
    await journey.login({ identifier: '+39 333 123 4567' });
    const again = await journey.resend();
    expect(again).toMatchObject({ success: false, data: { reason: 'already_sent', retry_after: expect.any(Number) } });
    expect(journey.state).toMatchObject({ step: 14, flow: 'phone' });
  });
});
