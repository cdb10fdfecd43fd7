import {
  fixture,
  identityApp,
  identityConfig,
  intercept,
  paths,
  setCookies,
  useNock,
} from '../actions/identity/support';

/*
 * `__utp` carries a bearer token: Secure unless the sandbox (plain http://127.0.0.1) is on,
 * whatever NODE_ENV says. The service itself usually speaks plain http behind a TLS proxy, so
 * setting a Secure cookie must not fail on a plain connection.
 */

const uid = 'PNIa7Xk2mR0ssi';

async function issueCookie(config = identityConfig(), headers: Record<string, string> = {}) {
  const { call, proof } = identityApp(config);
  intercept('POST', paths.token, 200, fixture('token'));
  const res = await call('access_token', { uid, proof: proof({ uid }) }, headers);
  expect(res.status).toBe(200);
  expect(res.body.success).toBe(true);
  const cookies = setCookies(res);
  expect(cookies).toHaveLength(1);
  expect(cookies[0]).toMatch(/^__utp=/);
  return cookies[0]!;
}

describe('the __utp cookie', () => {
  useNock();

  it('is Secure by default, over a plain connection, outside production', async () => {
    expect(process.env.NODE_ENV).not.toBe('production');
    expect(await issueCookie()).toMatch(/; samesite=lax; secure; httponly$/);
  });

  it('is Secure behind a proxy that says the client spoke plain http', async () => {
    const cookie = await issueCookie(identityConfig({ server: { trust_proxy_hops: 1 } }), {
      'x-forwarded-proto': 'http',
    });
    expect(cookie).toMatch(/; secure; /);
  });

  it('is not Secure with sandbox.enabled', async () => {
    const cookie = await issueCookie(identityConfig({ sandbox: { enabled: true } }));
    expect(cookie).not.toMatch(/secure/i);
    expect(cookie).toMatch(/; samesite=lax; httponly$/);
  });
});
