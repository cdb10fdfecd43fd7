import { useNock } from '../../support/nock';
import { fixture, formOf, intercept, paths, setCookies } from '../identity/support';
import { smsGateway, useSmtp } from '../otp/harness';
import { collector, COLLECTOR_TOKEN, flowsApp, MARIO, searchReply, tokenFor } from './support';

const NEW_UID = 'PNIn3wUs3r0001';
const steps = (debug: Array<{ step: string }>) =>
  debug.map((entry) => entry.step).filter((step) => /^step_|^login_ingestion$/.test(step));

describe('FeRegister: new users', () => {
  useNock();
  const smtp = useSmtp();

  it('registers a new user by phone: 14, 24 (phone_proof), 23 (pending_proof), 25 (register_proof), then 90', async () => {
    const { call, deps } = flowsApp(smtp.port());
    const sms = smsGateway();
    const ingest = collector();
    const email = 'nina.neri@example.com';

    await call('FeLogin', { identifier: MARIO.phone });
    intercept('POST', paths.search, 200, searchReply());
    const verified = await call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: sms.codes()[0] });
    expect(verified.body.data).toMatchObject({ next_step: 24, flow: 'phone_register' });

    const emailOtp = await call('FeRegister', {
      phase: 'email_otp',
      email,
      phone: MARIO.phone,
      otp: true,
      phone_proof: verified.body.data.phone_proof,
    });
    expect(emailOtp.body.data).toEqual({
      next_step: 23,
      flow: 'phone_register',
      otp: expect.objectContaining({ notified: { sms: false, email: true } }),
      pending_proof: expect.any(String),
    });
    expect(smtp.mails.map((m) => m.to)).toEqual([[email]]);

    intercept('POST', paths.usersGet, 404, fixture('users-get-not-found'));
    const emailVerified = await call('FeVerifyOtp', {
      flow: 'phone_register',
      email,
      phone: MARIO.phone,
      otp_code: smtp.codes()[0],
      pending_proof: emailOtp.body.data.pending_proof,
    });
    expect(emailVerified.body.data).toEqual({
      next_step: 25,
      flow: 'phone_register',
      register_proof: expect.any(String),
    });

    const search = intercept('POST', paths.search, 200, searchReply());
    const register = intercept('POST', paths.register, 200, fixture('register'));
    const doi = intercept('POST', paths.doi, 200, fixture('doi-status'));
    const identity = intercept('POST', paths.update, 200, fixture('user-update'));
    const custom = intercept('POST', paths.update, 200, fixture('user-update'));
    const token = intercept('POST', paths.token, 200, tokenFor(NEW_UID));
    const done = await call('FeRegister', {
      phase: 'register',
      email,
      phone: MARIO.phone,
      first_name: 'Nina',
      last_name: 'Neri',
      city: 'Roma',
      birth_date: '1990-01-31',
      consents: { terms_conditions: true },
      register_proof: emailVerified.body.data.register_proof,
    });
    expect(done.body.data).toEqual({
      next_step: 90,
      flow: 'phone_register',
      screen: 'success',
      done: true,
      uid: NEW_UID,
      access_token: tokenFor(NEW_UID).access_token,
      proof: expect.any(String),
    });
    expect(search.scope.isDone()).toBe(true);
    expect(register.seen[0]!.query).toMatchObject({
      email,
      consents: JSON.stringify({ terms_conditions: true }),
      is_passwordless: 'true',
    });
    expect(doi.seen[0]!.query).toMatchObject({ uid: NEW_UID, email_confirmation_state: 'CONFIRMED' });
    expect(formOf(identity.seen[0]!)).toEqual({ first_name: 'Nina', last_name: 'Neri' });
    expect(custom.seen[0]!.body).toEqual({ city: 'Roma', birth_date: '1990-01-31', otp_phone: Number(MARIO.digits) });
    expect(token.seen[0]!.query).toMatchObject({ uid: NEW_UID });
    expect(setCookies(done).join()).toContain(`__utp=${tokenFor(NEW_UID).access_token}`);
    await deps.loginIngest.drain(2000);
    expect(ingest.ingested).toEqual([
      { body: { uid: NEW_UID, accessToken: tokenFor(NEW_UID).access_token }, token: COLLECTOR_TOKEN },
    ]);
  });

  it('registers by email through both phases: email_otp answers 23 and pending_proof, register passes 36, 40, 42, ingest and answers 90', async () => {
    const { call, deps } = flowsApp(smtp.port(), { debug: true });
    const ingest = collector();
    const email = 'dario.bianchi@example.com';

    const emailOtp = await call('FeRegister', { phase: 'email_otp', email, otp: true });
    expect(emailOtp.body.data).toEqual({
      next_step: 23,
      flow: 'email_register',
      otp: expect.objectContaining({ notified: { sms: false, email: true } }),
      pending_proof: expect.any(String),
    });

    intercept('POST', paths.usersGet, 404, fixture('users-get-not-found'));
    const verified = await call('FeVerifyOtp', {
      flow: 'email_register',
      email,
      otp_code: smtp.codes()[0],
      pending_proof: emailOtp.body.data.pending_proof,
    });
    expect(verified.body.data).toEqual({ next_step: 37, flow: 'email_register', register_proof: expect.any(String) });

    intercept('POST', paths.register, 200, fixture('register'));
    intercept('POST', paths.doi, 200, fixture('doi-status'));
    intercept('POST', paths.update, 200, fixture('user-update'));
    const custom = intercept('POST', paths.update, 200, fixture('user-update'));
    intercept('POST', paths.token, 200, tokenFor(NEW_UID));
    const done = await call('FeRegister', {
      phase: 'register',
      email,
      first_name: 'Dario',
      last_name: 'Bianchi',
      city: 'Roma',
      birth_date: '1991-02-03',
      register_proof: verified.body.data.register_proof,
    });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      flow: 'email_register_phone',
      done: true,
      uid: NEW_UID,
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    expect(custom.seen[0]!.body).toEqual({ city: 'Roma', birth_date: '1991-02-03' });
    expect(steps(done.body.debug)).toEqual(['step_36', 'step_40', 'step_42', 'login_ingestion', 'step_90']);
    await deps.loginIngest.drain(2000);
    expect(ingest.ingested).toHaveLength(1);
  });

  it('refuses phase register without a register_proof (proof_required), registering nobody', async () => {
    const { call } = flowsApp(smtp.port());
    const register = intercept('POST', paths.register, 200, fixture('register'));
    const res = await call('FeRegister', { phase: 'register', email: 'x@example.com', first_name: 'X' });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(register.scope.isDone()).toBe(false);
  });

  it('refuses a register_proof for another email (invalid_proof), registering nobody', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const register = intercept('POST', paths.register, 200, fixture('register'));
    const proof = stepProof({ kind: 'register', step: 37, flow: 'email_register', email: 'owner@example.com' });
    const res = await call('FeRegister', { phase: 'register', email: 'intruder@example.com', register_proof: proof });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', field: 'email' } });
    expect(register.scope.isDone()).toBe(false);
  });
});
