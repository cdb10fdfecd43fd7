import nock from 'nock';
import { BASE, fixture, identityApp, identityConfig, intercept, internal, paths, setCookies, useNock } from './support';

/** The token endpoint answering up to `times` calls, counting them. */
function nockTokens(times: number) {
  let issued = 0;
  nock(BASE)
    .post(paths.token)
    .query(true)
    .times(times)
    .reply(() => {
      issued += 1;
      return [200, fixture('token')];
    });
  return { issued: () => issued };
}

const uid = 'PNIa7Xk2mR0ssi';
const token = fixture<{ access_token: string }>('token').access_token;
const expiresOf = (cookie: string) => Date.parse(/expires=([^;]+)/.exec(cookie)![1]!);

describe('access_token', () => {
  useNock();

  it('issues a token with a proof binding the uid and stores it in __utp', async () => {
    const { call, proof } = identityApp();
    const { scope, seen } = intercept('POST', paths.token, 200, fixture('token'));
    const res = await call('access_token', { uid, proof: proof({ uid }) });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query).toMatchObject({ uid });
    expect(res.body).toEqual({ success: true, error: null, data: { access_token: token, proof: expect.any(String) } });
    expect(setCookies(res)).toHaveLength(1);
    expect(setCookies(res)[0]).toMatch(
      new RegExp(`^__utp=${token.replace(/\./g, '\\.')}; path=/; expires=[^;]+; samesite=lax; secure; httponly$`),
    );
  });

  it('spends the proof: a replayed one issues no second token, 20 concurrent uses issue one', async () => {
    const { call, proof } = identityApp();
    const { scope } = intercept('POST', paths.token, 200, fixture('token'));
    const used = proof({ uid });
    expect((await call('access_token', { uid, proof: used })).body.success).toBe(true);
    expect(scope.isDone()).toBe(true);
    const replay = await call('access_token', { uid, proof: used });
    expect(replay.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    expect(setCookies(replay)).toHaveLength(0);

    const many = proof({ uid });
    const tokens = nockTokens(20);
    const answers = await Promise.all(Array.from({ length: 20 }, () => call('access_token', { uid, proof: many })));
    expect(answers.filter((res) => res.body.success)).toHaveLength(1);
    expect(tokens.issued()).toBe(1);
  });

  it('answers a fresh proof that issues one more token, for the next step', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.token, 200, fixture('token'));
    const first = await call('access_token', { uid, proof: proof({ uid }) });
    const { scope } = intercept('POST', paths.token, 200, fixture('token'));
    expect((await call('access_token', { uid, proof: first.body.data.proof })).body.success).toBe(true);
    expect(scope.isDone()).toBe(true);
  });

  it('passes the body object of a trusted caller to the provider', async () => {
    const { call } = identityApp();
    const { seen } = intercept('POST', paths.token, 200, fixture('token'));
    await call('access_token', { uid, body: { device: 'web' } }, internal);
    expect(seen[0]!.body).toEqual({ device: 'web' });
  });

  it('refuses a body from a caller with a proof only, calling nothing and spending nothing (a uid or lifetime must not come from them)', async () => {
    const { call, proof } = identityApp();
    const { scope } = intercept('POST', paths.token, 200, fixture('token'));
    const given = proof({ uid });
    const refused = await call('access_token', {
      uid,
      body: { uid: 'someone-else', expires_in: 31536000 },
      proof: given,
    });
    expect(refused.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'body' }] },
    });
    expect(scope.isDone()).toBe(false);
    // An empty body is no body: the same proof still works.
    expect((await call('access_token', { uid, body: {}, proof: given })).body.success).toBe(true);
  });

  it('keeps the cookie 30 days by default when the token does not say its lifetime', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.token, 200, fixture('token'));
    const res = await call('access_token', { uid, proof: proof({ uid }) });
    expect(Math.abs(expiresOf(setCookies(res)[0]!) - (Date.now() + 30 * 24 * 3600 * 1000))).toBeLessThan(5000);
  });

  it('keeps the cookie for the token expires_in when the provider says it', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.token, 200, { ...fixture<Record<string, unknown>>('token'), expires_in: 3600 });
    const res = await call('access_token', { uid, proof: proof({ uid }) });
    expect(Math.abs(expiresOf(setCookies(res)[0]!) - (Date.now() + 3600 * 1000))).toBeLessThan(5000);
  });

  it('sets a session cookie when stay_logged_in is false', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.token, 200, fixture('token'));
    const res = await call('access_token', { uid, stay_logged_in: false, proof: proof({ uid }) });
    expect(setCookies(res)[0]).not.toMatch(/expires=/);
  });

  it('sets Secure in production too, and the configured domain', async () => {
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const { call, proof } = identityApp(identityConfig({ server: { cookie_domain: '.example.com' } }));
      intercept('POST', paths.token, 200, fixture('token'));
      const res = await call('access_token', { uid, proof: proof({ uid }) });
      expect(setCookies(res)[0]).toMatch(/; domain=\.example\.com; samesite=lax; secure; httponly$/);
    } finally {
      process.env.NODE_ENV = previous;
    }
  });

  it('refuses an expired proof with invalid_proof', async () => {
    const { call, proof, deps } = identityApp();
    const stale = proof({ uid }, 1);
    deps.now = () => Date.now() + 2000;
    const res = await call('access_token', { uid, proof: stale });
    expect(res.body).toMatchObject({
      success: false,
      error: 'Sessione non valida o scaduta. Ricomincia l’accesso.',
      data: { reason: 'invalid_proof', why: 'expired' },
    });
  });
});
