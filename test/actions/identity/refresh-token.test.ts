import { fixture, formOf, identityApp, intercept, paths, setCookies, useNock } from './support';

const refreshed = fixture<{ access_token: string }>('refresh');

describe('refresh_token', () => {
  useNock();

  it('answers the token result and stores the new access token in __utp', async () => {
    const { call } = identityApp();
    const { seen } = intercept('POST', paths.refresh, 200, fixture('refresh'));
    const res = await call('refresh_token', { refresh_token: 'RTq8Zr1mXfT0bW2nC5yE7uA9' });
    expect(formOf(seen[0]!)).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'RTq8Zr1mXfT0bW2nC5yE7uA9' });
    expect(res.body.data).toEqual({
      access_token: refreshed.access_token,
      token_type: 'Bearer',
      refresh_token: 'RTw2Fs9hJ4kD1mN6qZ8cV3xB',
      expires_in: 2592000,
      email_confirmation_required: false,
    });
    expect(setCookies(res)[0]).toMatch(new RegExp(`^__utp=${refreshed.access_token.replace(/\./g, '\\.')};`));
  });

  it('leaves the cookie alone when the provider returns the token the cookie already holds', async () => {
    const { call } = identityApp();
    intercept('POST', paths.refresh, 200, fixture('refresh'));
    const res = await call(
      'refresh_token',
      { refresh_token: 'RTq8Zr1mXfT0bW2nC5yE7uA9' },
      { cookie: `__utp=${refreshed.access_token}` },
    );
    expect(res.body.success).toBe(true);
    expect(setCookies(res)).toEqual([]);
  });

  it('answers invalid_token, and sets no cookie, when the provider refuses the refresh token', async () => {
    const { call } = identityApp();
    intercept('POST', paths.refresh, 400, fixture('refresh-invalid-grant'));
    const res = await call('refresh_token', { refresh_token: 'expired' });
    expect(res.body).toEqual({
      success: false,
      error: 'Sessione scaduta o non valida. Accedi di nuovo.',
      data: { reason: 'invalid_token', upstream: 'identity' },
    });
    expect(setCookies(res)).toEqual([]);
  });
});
