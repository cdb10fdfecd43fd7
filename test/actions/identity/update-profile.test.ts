import { fixture, formOf, identityApp, intercept, internal, paths, useNock } from './support';

const uid = 'PNIa7Xk2mR0ssi';
const searchHolding = (holder: string) => {
  const reply = fixture<{ users: Array<{ uid: string }> }>('user-search');
  reply.users[0]!.uid = holder;
  return reply;
};

describe('update_profile', () => {
  useNock();

  it('makes one form-urlencoded identity call for names and email only', async () => {
    const { call } = identityApp();
    const { scope, seen } = intercept('POST', paths.update, 200, fixture('user-update'));
    const res = await call('update_profile', { uid, first_name: 'Mario', last_name: 'Bianchi', city: '' }, internal);
    expect(scope.isDone()).toBe(true);
    expect(seen).toHaveLength(1);
    expect(formOf(seen[0]!)).toEqual({ first_name: 'Mario', last_name: 'Bianchi' });
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: { calls: ['identity'], identity: fixture('user-update'), custom: null },
      payload: { uid, first_name: 'Mario', last_name: 'Bianchi' },
    });
  });

  it('makes one JSON custom call for city and birth date only', async () => {
    const { call } = identityApp();
    const { seen } = intercept('POST', paths.update, 200, fixture('user-update'));
    const res = await call('update_profile', { uid, city: 'Roma', birth_date: '1990-01-31' }, internal);
    expect(seen[0]!.body).toEqual({ city: 'Roma', birth_date: '1990-01-31' });
    expect(res.body.data).toMatchObject({ calls: ['custom'], identity: null, custom: fixture('user-update') });
    expect(res.body.payload).toEqual({ uid, city: 'Roma', birth_date: '1990-01-31' });
  });

  it('checks a new phone first, then makes both calls, the phone sent as a number', async () => {
    const { call } = identityApp();
    const search = intercept('POST', paths.search, 200, searchHolding(uid));
    const identity = intercept('POST', paths.update, 200, fixture('user-update'));
    const custom = intercept('POST', paths.update, 200, fixture('user-update'));
    const res = await call(
      'update_profile',
      { uid, email: 'mario.rossi@example.com', otp_phone: '+39 333 1234567', city: 'Roma' },
      internal,
    );
    expect(search.scope.isDone() && identity.scope.isDone() && custom.scope.isDone()).toBe(true);
    expect(formOf(identity.seen[0]!)).toEqual({ email: 'mario.rossi@example.com' });
    expect(custom.seen[0]!.body).toEqual({ city: 'Roma', otp_phone: 393331234567 });
    expect(res.body.data.calls).toEqual(['identity', 'custom']);
    expect(res.body.payload).toEqual({
      uid,
      email: 'mario.rossi@example.com',
      otp_phone: '+39 333 1234567',
      city: 'Roma',
    });
  });

  it('answers phone_taken, and updates nothing, when another uid holds the phone', async () => {
    const { call } = identityApp();
    intercept('POST', paths.search, 200, searchHolding('PNIsomeoneelse'));
    const update = intercept('POST', paths.update, 200, fixture('user-update'));
    const res = await call('update_profile', { uid, first_name: 'Mario', otp_phone: '3331234567' }, internal);
    expect(res.body).toEqual({
      success: false,
      error: 'Telefono già registrato su un altro account',
      data: { reason: 'phone_taken' },
    });
    expect(update.scope.isDone()).toBe(false);
  });

  it('refuses a request with no field to update', async () => {
    const { call } = identityApp();
    const res = await call('update_profile', { uid, city: '', first_name: null }, internal);
    expect(res.body.data).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: '', message: 'nessun campo da aggiornare' }],
    });
  });

  it('refuses a birth date that is not YYYY-MM-DD', async () => {
    const { call } = identityApp();
    const res = await call('update_profile', { uid, birth_date: '31/01/1990' }, internal);
    expect(res.body.data).toMatchObject({ reason: 'invalid_request', issues: [{ path: 'birth_date' }] });
  });

  it('answers user_not_found when the provider does not know the uid', async () => {
    const { call } = identityApp();
    intercept('POST', paths.update, 200, fixture('user-get-not-found'));
    const res = await call('update_profile', { uid: 'PNInobody', city: 'Roma' }, internal);
    expect(res.body).toEqual({
      success: false,
      error: 'Utente non trovato.',
      data: { reason: 'user_not_found', uid: 'PNInobody' },
    });
  });

  describe('guard', () => {
    it('accepts a proof binding the uid for personal data', async () => {
      const { call, proof } = identityApp();
      intercept('POST', paths.update, 200, fixture('user-update'));
      const res = await call('update_profile', {
        uid,
        city: 'Roma',
        proof: proof({ uid, email: 'mario.rossi@example.com', linked: ['email', 'uid'] }),
      });
      expect(res.body.success).toBe(true);
    });

    it('refuses a phone the proof does not vouch for', async () => {
      const { call, proof } = identityApp();
      const search = intercept('POST', paths.search, 200, searchHolding(uid));
      const res = await call('update_profile', { uid, otp_phone: '3331234567', proof: proof({ uid }) });
      expect(res.body.data.reason).toBe('proof_required');
      expect(search.scope.isDone()).toBe(false);
    });

    it('accepts a phone verified in the same proof as the uid', async () => {
      const { call, proof } = identityApp();
      intercept('POST', paths.search, 200, searchHolding(uid));
      intercept('POST', paths.update, 200, fixture('user-update'));
      const res = await call('update_profile', {
        uid,
        otp_phone: '3331234567',
        proof: proof({ uid, phone: '+393331234567' }),
      });
      expect(res.body.data.calls).toEqual(['custom']);
    });
  });
});
