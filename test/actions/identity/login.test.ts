import { freePort } from '../../support/ports';
import nock from 'nock';
import pino from 'pino';
import { messageOf } from '../../../src/core/errors';
import { verifyProof } from '../../../src/domain/proofs';
import { startSandbox } from '../../../src/sandbox';
import { createIdentityFake, SANDBOX_PASSWORD, sandboxSeedUsers } from '../../../src/sandbox/identity';
import { testConfig } from '../../support/app';
import { BASE, fixture, identityApp, identityConfig, intercept, paths, setCookies, useNock } from './support';

const email = 'mario.rossi@example.com';
const uid = 'PNIa7Xk2mR0ssi';

/** The one refusal of a password login, whatever the provider said. */
const refused = { success: false, error: 'Email o password non corretti.', data: { reason: 'invalid_credentials' } };

/** users/get of the account (its email confirmed): a passwordless login on a code proof looks it up first. */
const account = (times = 1, state = 'confirmed') =>
  nock(BASE)
    .post(paths.usersGet)
    .query(true)
    .times(times)
    .reply(200, { ...fixture<Record<string, unknown>>('users-get'), email_confirmation_state: state });

/** Answers exactly `times` logins with `reply`. */
const provider = (times: number, status: number, reply: unknown) => ({
  scope: nock(BASE)
    .post(paths.login)
    .query(true)
    .times(times)
    .reply(status, reply as nock.ReplyBody),
});

describe('login', () => {
  useNock();

  it('refuses a passwordless login without a proof for the email, before calling the provider', async () => {
    const { call } = identityApp();
    const { scope } = intercept('POST', paths.login, 200, fixture('login'));
    const res = await call('login', { email });
    expect(res.body.data.reason).toBe('proof_required');
    expect(scope.isDone()).toBe(false);
  });

  it('logs in passwordless with a proof for the email, passes the result through and stores the token', async () => {
    const { call, proof, deps } = identityApp();
    const lookup = account();
    const { scope, seen } = intercept('POST', paths.login, 200, fixture('login'));
    const res = await call('login', { email, proof: proof({ email }) });
    expect(lookup.isDone()).toBe(true);
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query.password).toBe('""');
    expect(seen[0]!.body).toEqual({ aid: expect.any(String), email, stay_logged_in: 'false' });
    const { access_token, pub_id } = fixture<{ access_token: string; pub_id: string }>('login');
    expect(res.body.data).toMatchObject({ access_token, pub_id, token_type: 'Bearer', registration: false });
    // Secure or not is the cookie module's rule (test/http); here: the token, a session cookie.
    expect(setCookies(res)).toEqual([
      expect.stringMatching(
        new RegExp(`^__utp=${access_token.replace(/\./g, '\\.')}; path=/; samesite=lax(; secure)?; httponly$`),
      ),
    ]);
    expect(verifyProof(deps.secret, res.body.data.proof, deps.now())).toMatchObject({ email, uid });
  });

  it('spends the proof of a passwordless login: a replay logs nobody in', async () => {
    const { call, proof } = identityApp();
    account();
    intercept('POST', paths.login, 200, fixture('login'));
    const used = proof({ email });
    expect((await call('login', { email, proof: used })).body.success).toBe(true);
    const replay = await call('login', { email, proof: used });
    expect(replay.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    expect(setCookies(replay)).toHaveLength(0);
  });

  /** user/get of the account: first with its phone, then (the read-back after the drop) as the provider keeps it. */
  const profileReads = (afterDrop: 'dropped' | 'kept') => {
    const user = fixture<{ user: { custom_fields: Array<{ field_name: string }> } }>('user-get');
    const dropped = {
      ...user,
      user: { ...user.user, custom_fields: user.user.custom_fields.filter((f) => f.field_name !== 'otp_phone') },
    };
    return nock(BASE)
      .post(paths.userGet)
      .query(true)
      .reply(200, user)
      .post(paths.userGet)
      .query(true)
      .reply(200, afterDrop === 'dropped' ? dropped : user);
  };

  it('claims an account whose email was never confirmed before logging its owner in: its phone is dropped, read back gone, the email confirmed', async () => {
    const { call, proof, deps } = identityApp();
    account(1, 'unconfirmed');
    const reads = profileReads('dropped');
    const drop = intercept('POST', paths.update, 200, fixture('user-update'));
    const doi = intercept('POST', paths.doi, 200, fixture('doi-status'));
    intercept('POST', paths.login, 200, fixture('login'));
    expect((await call('login', { email, proof: proof({ email }) })).body.success).toBe(true);
    expect(drop.seen[0]!.body).toEqual({ otp_phone: null });
    expect(reads.isDone()).toBe(true);
    expect(doi.scope.isDone()).toBe(true);
    await expect(deps.otp.phoneHeldFor('+393331234567')).resolves.toBe(uid);
  });

  it('logs no one in when the provider keeps the phone it was told to drop: upstream_error, no token, no DOI', async () => {
    const { call, proof } = identityApp();
    account(1, 'unconfirmed');
    profileReads('kept');
    intercept('POST', paths.update, 200, fixture('user-update'));
    const doi = intercept('POST', paths.doi, 200, fixture('doi-status'));
    const login = intercept('POST', paths.login, 200, fixture('login'));
    const res = await call('login', { email, proof: proof({ email }) });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'upstream_error', check: 'otp_phone_dropped' } });
    expect(setCookies(res)).toHaveLength(0);
    expect(doi.scope.isDone()).toBe(false);
    expect(login.scope.isDone()).toBe(false);
  });

  it('logs in with a password without a proof and answers a proof binding the account', async () => {
    const { call, deps } = identityApp();
    const { scope, seen } = intercept('POST', paths.login, 200, fixture('login'));
    const res = await call('login', { email, password: 's3cret', stay_logged_in: true });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.body).toMatchObject({ password: 's3cret', stay_logged_in: 'true' });
    expect(res.body.success).toBe(true);
    expect(verifyProof(deps.secret, res.body.data.proof, deps.now())).toMatchObject({
      email,
      uid,
      linked: ['email', 'uid'],
    });
    expect(setCookies(res)[0]).toMatch(/; expires=/);
  });

  it('still answers a refused passwordless login as upstream_error with the provider words', async () => {
    const { call, proof } = identityApp();
    account();
    const { scope } = intercept('POST', paths.login, 200, fixture('login-unknown-email'));
    const res = await call('login', { email, proof: proof({ email }) });
    expect(scope.isDone()).toBe(true);
    expect(res.body).toEqual({
      success: false,
      error: messageOf('upstream_error', { service: 'di identità' }),
      data: {
        reason: 'upstream_error',
        upstream: 'identity',
        endpoint: 'login',
        provider_errors: [{ code: '404', message: 'User not found' }],
      },
    });
  });

  describe('with a password: one refusal for an unknown email and a wrong password', () => {
    it('answers an unknown email and a wrong password with byte-identical envelopes and no cookie', async () => {
      const { call } = identityApp();
      const wrongPassword = intercept('POST', paths.login, 200, fixture('error-code-list'));
      const byPassword = await call('login', { email, password: 'wrong' });
      const unknownEmail = intercept('POST', paths.login, 200, fixture('login-unknown-email'));
      const byEmail = await call('login', { email: 'nessuno@example.com', password: 'wrong' });
      expect(wrongPassword.scope.isDone()).toBe(true);
      expect(unknownEmail.scope.isDone()).toBe(true);
      expect(byPassword.status).toBe(200);
      expect(byEmail.status).toBe(byPassword.status);
      expect(byEmail.text).toBe(byPassword.text);
      expect(byPassword.body).toEqual(refused);
      expect(setCookies(byPassword)).toEqual([]);
      expect(setCookies(byEmail)).toEqual([]);
    });

    it('answers the same bytes for an unknown email and a wrong password against the sandbox provider, and logs a seeded user in', async () => {
      const sandbox = await startSandbox(testConfig(), pino({ level: 'silent' }), [createIdentityFake]);
      try {
        const { call } = identityApp(sandbox.config);
        const [mario] = sandboxSeedUsers;
        const wrongPassword = await call('login', { email: mario!.email, password: 'wrong' });
        const unknownEmail = await call('login', { email: 'nessuno@example.com', password: SANDBOX_PASSWORD });
        expect(wrongPassword.body).toEqual(refused);
        expect(unknownEmail.text).toBe(wrongPassword.text);
        expect((await call('login', { email: mario!.email, password: SANDBOX_PASSWORD })).body).toMatchObject({
          success: true,
          data: { access_token: expect.any(String) },
        });
      } finally {
        await sandbox.close();
      }
    });

    it.each([
      ['HTTP 200 with error_code_list (wrong password)', 200, 'error-code-list'],
      ['HTTP 200 with error_code_list (unknown email)', 200, 'login-unknown-email'],
      ['HTTP 400 with error_code_list', 400, 'error-code-list'],
      ['HTTP 401 with error_code_list', 401, 'error-code-list'],
      ['HTTP 403 with an empty body', 403, ''],
      ['HTTP 404 with error_code_list (unknown email)', 404, 'login-unknown-email'],
    ])('answers the same refusal when the provider says %s', async (_style, status, name) => {
      const { call } = identityApp();
      const { scope } = intercept('POST', paths.login, status, name ? fixture(name) : '');
      const res = await call('login', { email, password: 'wrong' });
      expect(scope.isDone()).toBe(true);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(refused);
    });

    it('shows no provider exchange on the refusal even with debug on: it would tell an unknown email from a wrong password', async () => {
      const { call } = identityApp(identityConfig({ debug: true }));
      const { scope } = intercept('POST', paths.login, 200, fixture('login-unknown-email'));
      const res = await call('login', { email, password: 'wrong' });
      expect(scope.isDone()).toBe(true);
      expect(res.body).toEqual(refused);
    });

    it.each([
      ['HTTP 500', 500],
      ['HTTP 503', 503],
      ['HTTP 429 (the provider throttling us)', 429],
    ])('answers upstream_error, not invalid_credentials, on %s', async (_what, status) => {
      const { call } = identityApp();
      const { scope } = intercept('POST', paths.login, status, fixture('error-code-list'));
      const res = await call('login', { email, password: 'wrong' });
      expect(scope.isDone()).toBe(true);
      expect(res.body).toEqual({
        success: false,
        error: 'Servizio di identità non disponibile. Riprova più tardi.',
        data: { reason: 'upstream_error', upstream: 'identity', endpoint: 'login', upstream_status: status },
      });
    });

    it('answers upstream_error when the provider does not answer in time', async () => {
      const { call } = identityApp(identityConfig({ identity: { timeout_seconds: 1 } }));
      const scope = nock(BASE).post(paths.login).query(true).delay(3000).reply(200, fixture('error-code-list'));
      const res = await call('login', { email, password: 'wrong' });
      expect(scope.isDone()).toBe(true);
      expect(res.body.data).toEqual({ reason: 'upstream_error', upstream: 'identity', endpoint: 'login' });
    });

    it('answers upstream_error when the provider refuses the connection', async () => {
      const port = await freePort();
      const { call } = identityApp(identityConfig({ identity: { base_url: `http://127.0.0.1:${port}` } }));
      const res = await call('login', { email, password: 'wrong' });
      expect(res.body.data).toEqual({ reason: 'upstream_error', upstream: 'identity', endpoint: 'login' });
    });

    it('answers upstream_error on a 2xx reply that is no login reply', async () => {
      const { call } = identityApp();
      const { scope } = intercept('POST', paths.login, 200, '<html>maintenance</html>');
      const res = await call('login', { email, password: 's3cret' });
      expect(scope.isDone()).toBe(true);
      expect(res.body.data).toMatchObject({ reason: 'upstream_error', endpoint: 'login' });
    });
  });

  describe('with a password: attempts are limited', () => {
    it('refuses the 6th attempt for one email within the window with 429, whatever the case, without calling the provider', async () => {
      const { call } = identityApp();
      const five = provider(5, 200, fixture('error-code-list'));
      const answers = [];
      for (const address of [email, email, 'Mario.Rossi@example.com', email, 'MARIO.ROSSI@EXAMPLE.COM']) {
        answers.push(await call('login', { email: address, password: 'wrong' }));
      }
      expect(answers.map((a) => a.body.data.reason)).toEqual(Array(5).fill('invalid_credentials'));
      expect(five.scope.isDone()).toBe(true);

      const sixth = intercept('POST', paths.login, 200, fixture('login'));
      const res = await call('login', { email, password: 'the-right-one' });
      expect(sixth.scope.isDone()).toBe(false);
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({
        success: false,
        error: expect.stringMatching(/^Troppe richieste\. Riprova tra \d+ secondi\.$/),
        data: { reason: 'rate_limited', limit: 'password_logins_per_email', retry_after: expect.any(Number) },
      });
      expect(res.body.data.retry_after).toBeGreaterThan(0);
      expect(res.body.data.retry_after).toBeLessThanOrEqual(900);
      expect(Number(res.headers['retry-after'])).toBe(res.body.data.retry_after);
    });

    it('counts attempts again once the window has passed', async () => {
      let now = Date.UTC(2024, 4, 1);
      const { call } = identityApp(identityConfig(), { now: () => now });
      provider(5, 200, fixture('error-code-list'));
      for (let i = 0; i < 5; i++) await call('login', { email, password: 'wrong' });
      expect((await call('login', { email, password: 'wrong' })).status).toBe(429);
      now += 900_000;
      const { scope } = intercept('POST', paths.login, 200, fixture('login'));
      const res = await call('login', { email, password: 's3cret' });
      expect(scope.isDone()).toBe(true);
      expect(res.body.success).toBe(true);
    });

    it('refuses attempts from one IP across many emails over password_logins_per_ip (30)', async () => {
      const { call } = identityApp();
      const thirty = provider(30, 200, fixture('login-unknown-email'));
      for (let i = 0; i < 30; i++) {
        expect((await call('login', { email: `utente${i}@example.com`, password: 'guess' })).body.data.reason).toBe(
          'invalid_credentials',
        );
      }
      expect(thirty.scope.isDone()).toBe(true);
      const next = intercept('POST', paths.login, 200, fixture('login-unknown-email'));
      const res = await call('login', { email: 'utente30@example.com', password: 'guess' });
      expect(next.scope.isDone()).toBe(false);
      expect(res.status).toBe(429);
      expect(res.body.data).toMatchObject({ reason: 'rate_limited', limit: 'password_logins_per_ip' });
      expect(res.headers['retry-after']).toBe(String(res.body.data.retry_after));
    });

    it('does not count passwordless logins', async () => {
      const { call, proof } = identityApp(
        identityConfig({ rate_limits: { password_logins_per_email: 1, password_logins_per_ip: 1 } }),
      );
      const passwordless = provider(3, 200, fixture('login'));
      account(3);
      for (let i = 0; i < 3; i++)
        expect((await call('login', { email, proof: proof({ email }) })).body.success).toBe(true);
      expect(passwordless.scope.isDone()).toBe(true);
      const { scope } = intercept('POST', paths.login, 200, fixture('login'));
      expect((await call('login', { email, password: 's3cret' })).body.success).toBe(true);
      expect(scope.isDone()).toBe(true);
    });
  });
});
