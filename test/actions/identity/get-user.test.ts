import { fixture, formOf, identityApp, intercept, internal, paths, useNock } from './support';

const uid = 'PNIa7Xk2mR0ssi';

describe('get_user', () => {
  useNock();

  it('answers the reduced profile and its meta, and nothing of the raw payload', async () => {
    const { call, proof } = identityApp();
    const { scope, seen } = intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call('get_user', { uid, proof: proof({ uid }) });
    expect(scope.isDone()).toBe(true);
    expect(formOf(seen[0]!).uid).toBe(uid);
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: {
        uid,
        email: 'mario.rossi@example.com',
        first_name: 'Mario',
        last_name: 'Rossi',
        city: 'Milano',
        birth_date: '1985-04-12',
        otp_phone: '393331234567',
        has_otp_phone: true,
        profile_complete: true,
      },
      meta: { exists: true, uid, has_otp_phone: true, otp_phone: '393331234567', profile_complete: true },
    });
  });

  it('answers an unknown uid as success with data null and meta.exists false', async () => {
    const { call } = identityApp();
    intercept('POST', paths.userGet, 200, fixture('user-get-not-found'));
    const res = await call('get_user', { uid: 'PNInobody' }, internal);
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: null,
      meta: { exists: false, uid: null, has_otp_phone: false, otp_phone: null, profile_complete: false },
    });
  });

  it('marks a profile without phone as incomplete', async () => {
    const { call } = identityApp();
    const reply = fixture<{ user: { custom_fields: Array<{ field_name: string }> } }>('user-get');
    reply.user.custom_fields = reply.user.custom_fields.filter((f) => f.field_name !== 'otp_phone');
    intercept('POST', paths.userGet, 200, reply);
    const res = await call('get_user', { uid }, internal);
    expect(res.body.data).toMatchObject({ otp_phone: null, has_otp_phone: false, profile_complete: false });
  });

  it('refuses without a proof binding the uid, before calling the provider', async () => {
    const { call, proof } = identityApp();
    const { scope } = intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call('get_user', { uid, proof: proof({ uid: 'PNIsomeoneelse' }) });
    expect(res.body).toEqual({
      success: false,
      error: 'Verifica richiesta: conferma prima il codice ricevuto.',
      data: { reason: 'proof_required' },
    });
    expect(scope.isDone()).toBe(false);
  });
});
