import { API_TOKEN, fixture, identityApp, identityConfig, intercept, internal, paths, useNock } from './support';

const uid = 'PNIa7Xk2mR0ssi';
const token = fixture<{ access_token: string }>('token').access_token;

describe('idp_debug', () => {
  useNock();

  it('is absent when debug is off', async () => {
    const { call } = identityApp();
    intercept('POST', paths.token, 200, fixture('token'));
    const res = await call('access_token', { uid }, internal);
    expect(res.body.idp_debug).toBeUndefined();
  });

  it('shows the provider request and reply with the publisher key and the tokens masked when debug is on', async () => {
    const { call } = identityApp(identityConfig({ debug: true }));
    intercept('POST', paths.token, 200, fixture('token'));
    const res = await call('access_token', { uid }, internal);
    expect(res.body.data.access_token).toBe(token);
    expect(res.body.idp_debug).toMatchObject({
      endpoint: 'token',
      method: 'POST',
      url: `https://idp.test${paths.token}`,
      query: { api_token: '***', uid },
      status: 200,
      response: { access_token: '***' },
    });
    const shown = JSON.stringify(res.body.idp_debug);
    expect(shown).not.toContain(API_TOKEN);
    expect(shown).not.toContain(token);
  });

  it('masks the user token sent as Bearer', async () => {
    const { call } = identityApp(identityConfig({ debug: true }));
    intercept('GET', paths.accessList, 200, fixture('access-list'));
    const res = await call('user_access_list', { access_token: 'user-token-abcdefgh' });
    expect(JSON.stringify(res.body.idp_debug)).not.toContain('user-token-abcdefgh');
    expect(res.body.idp_debug.headers.Authorization).toBe('***');
  });

  it('lists every exchange in idp_debugs when an action makes several calls', async () => {
    const { call } = identityApp(identityConfig({ debug: true }));
    intercept('POST', paths.usersGet, 200, fixture('users-get'));
    intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call('get_user_email', { email: 'mario.rossi@example.com' }, internal);
    expect(res.body.idp_debugs.map((e: { endpoint: string }) => e.endpoint)).toEqual(['users_get', 'user_get']);
    expect(res.body.idp_debug.endpoint).toBe('user_get');
  });

  it('comes with failures too', async () => {
    const { call } = identityApp(identityConfig({ debug: true }));
    intercept('POST', paths.userGet, 503, 'maintenance');
    const res = await call('get_user', { uid }, internal);
    expect(res.body.success).toBe(false);
    expect(res.body.idp_debug).toMatchObject({
      endpoint: 'user_get',
      status: 503,
      error: { reason: 'upstream_error' },
    });
  });
});
