import { fixture, identityApp, intercept, paths, useNock } from './support';

describe('user_access_list', () => {
  useNock();

  it('maps each access to access_id, resource {rid, name} and granted, with the count and the raw reply', async () => {
    const { call } = identityApp();
    const { scope } = intercept('GET', paths.accessList, 200, fixture('access-list'));
    const res = await call('user_access_list', { access_token: 'body.jwt.token' });
    expect(scope.isDone()).toBe(true);
    expect(res.body.data).toEqual({
      count: 2,
      accesses: [
        { access_id: 'AC7ttT0p9aQ1', resource: { rid: 'RPREMIUM01', name: 'Abbonamento digitale' }, granted: true },
        { access_id: 'AC2kLm8nB4vX', resource: { rid: 'RNEWSLET01', name: 'Newsletter premium' }, granted: false },
      ],
      raw: fixture('access-list'),
    });
  });

  it('takes the token from the body before the cookie and the Bearer header', async () => {
    const { call } = identityApp();
    const { seen } = intercept('GET', paths.accessList, 200, fixture('access-list'));
    await call(
      'user_access_list',
      { access_token: 'from.body' },
      { cookie: '__utp=from.cookie', authorization: 'Bearer from.header' },
    );
    expect(seen[0]!.headers.authorization).toBe('Bearer from.body');
  });

  it('takes the token from the cookie before the Bearer header', async () => {
    const { call } = identityApp();
    const { seen } = intercept('GET', paths.accessList, 200, fixture('access-list'));
    await call('user_access_list', {}, { cookie: '__utp=from.cookie', authorization: 'Bearer from.header' });
    expect(seen[0]!.headers.authorization).toBe('Bearer from.cookie');
  });

  it('takes the token from the Bearer header when there is no other', async () => {
    const { call } = identityApp();
    const { seen } = intercept('GET', paths.accessList, 200, fixture('access-list'));
    await call('user_access_list', {}, { authorization: 'Bearer from.header' });
    expect(seen[0]!.headers.authorization).toBe('Bearer from.header');
  });

  it('answers token_required, without calling the provider, when no token is given', async () => {
    const { call } = identityApp();
    const { scope } = intercept('GET', paths.accessList, 200, fixture('access-list'));
    const res = await call('user_access_list', {}, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(res.body).toEqual({
      success: false,
      error: 'Token di accesso mancante: accedi di nuovo.',
      data: { reason: 'token_required' },
    });
    expect(scope.isDone()).toBe(false);
  });

  it('answers invalid_token when the provider refuses the token', async () => {
    const { call } = identityApp();
    intercept('GET', paths.accessList, 401, { code: 401, message: 'Unauthorized' });
    const res = await call('user_access_list', { access_token: 'stale' });
    expect(res.body.data.reason).toBe('invalid_token');
  });
});
