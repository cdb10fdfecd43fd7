import { verifyProof } from '../../../src/proofs/proof';
import { fixture, identityApp, intercept, paths, setCookies, useNock } from './support';

const email = 'mario.rossi@example.com';
const uid = 'PNIa7Xk2mR0ssi';

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
    const { seen } = intercept('POST', paths.login, 200, fixture('login'));
    const res = await call('login', { email, proof: proof({ email }) });
    expect(seen[0]!.query.password).toBe('""');
    expect(seen[0]!.body).toEqual({ aid: expect.any(String), email, stay_logged_in: 'false' });
    const { access_token, pub_id } = fixture<{ access_token: string; pub_id: string }>('login');
    expect(res.body.data).toMatchObject({ access_token, pub_id, token_type: 'Bearer', registration: false });
    expect(setCookies(res)).toEqual([expect.stringMatching(new RegExp(`^__utp=${access_token.replace(/\./g, '\\.')}; path=/; samesite=lax; httponly$`))]);
    expect(verifyProof(deps.secret, res.body.data.proof, deps.now())).toMatchObject({ email, uid });
  });

  it('logs in with a password without a proof and answers a proof binding the account', async () => {
    const { call, deps } = identityApp();
    const { seen } = intercept('POST', paths.login, 200, fixture('login'));
    const res = await call('login', { email, password: 's3cret', stay_logged_in: true });
    expect(seen[0]!.body).toMatchObject({ password: 's3cret', stay_logged_in: 'true' });
    expect(res.body.success).toBe(true);
    expect(verifyProof(deps.secret, res.body.data.proof, deps.now())).toMatchObject({ email, uid, linked: ['email', 'uid'] });
    expect(setCookies(res)[0]).toMatch(/; expires=/);
  });

  it('answers a refused login as upstream_error with the provider words and sets no cookie', async () => {
    const { call } = identityApp();
    intercept('POST', paths.login, 200, fixture('error-code-list'));
    const res = await call('login', { email, password: 'wrong' });
    expect(res.body).toEqual({
      success: false,
      error: 'Il provider di identità ha rifiutato la richiesta.',
      data: { reason: 'upstream_error', upstream: 'identity', endpoint: 'login', provider_errors: [{ code: '400', message: 'Incorrect email or password' }] },
    });
    expect(setCookies(res)).toEqual([]);
  });
});
