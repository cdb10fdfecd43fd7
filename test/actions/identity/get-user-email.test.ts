import { verifyProof } from '../../../src/domain/proofs';
import { fixture, formOf, identityApp, intercept, internal, paths, useNock } from './support';

const email = 'mario.rossi@example.com';
const uid = 'PNIa7Xk2mR0ssi';

describe('get_user_email', () => {
  useNock();

  it('looks the email up, then reads the profile for its custom fields', async () => {
    const { call } = identityApp();
    const lookup = intercept('POST', paths.usersGet, 200, fixture('users-get'));
    const read = intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call('get_user_email', { email }, internal);
    expect(lookup.scope.isDone() && read.scope.isDone()).toBe(true);
    expect(lookup.seen[0]!.query.email).toBe(email);
    expect(formOf(read.seen[0]!).uid).toBe(uid);
    expect(res.body.data).toEqual({
      uid,
      email,
      first_name: 'Mario',
      last_name: 'Rossi',
      city: 'Milano',
      birth_date: '1985-04-12',
      otp_phone: '393331234567',
      has_otp_phone: true,
      profile_complete: true,
    });
    expect(res.body.meta).toEqual({
      exists: true,
      uid,
      has_otp_phone: true,
      otp_phone: '393331234567',
      profile_complete: true,
    });
  });

  it('answers exists false, without the profile read, for an unknown email', async () => {
    const { call } = identityApp();
    intercept('POST', paths.usersGet, 200, fixture('users-get-not-found'));
    const read = intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call('get_user_email', { email: 'nessuno@example.com' }, internal);
    expect(res.body).toMatchObject({
      success: true,
      data: null,
      meta: { exists: false, uid: null, has_otp_phone: false },
    });
    expect(read.scope.isDone()).toBe(false);
  });

  it('falls back to the users/get profile when the profile read does not know the uid', async () => {
    const { call } = identityApp();
    intercept('POST', paths.usersGet, 200, fixture('users-get'));
    intercept('POST', paths.userGet, 200, fixture('user-get-not-found'));
    const res = await call('get_user_email', { email }, internal);
    expect(res.body.data).toMatchObject({
      uid,
      first_name: 'Mario',
      otp_phone: '393331234567',
      city: null,
      profile_complete: false,
    });
  });

  it('answers only exists and has_otp_phone to a caller without a proof', async () => {
    const { call } = identityApp();
    intercept('POST', paths.usersGet, 200, fixture('users-get'));
    intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call('get_user_email', { email });
    expect(res.body.data).toBeNull();
    expect(res.body.meta).toEqual({
      exists: true,
      uid: null,
      has_otp_phone: true,
      otp_phone: null,
      profile_complete: null,
      limited: true,
    });
  });

  it('answers in full with a proof for the email and adds a proof binding the uid', async () => {
    const { call, proof, deps } = identityApp();
    intercept('POST', paths.usersGet, 200, fixture('users-get'));
    intercept('POST', paths.userGet, 200, fixture('user-get'));
    const res = await call(
      'get_user_email',
      { email },
      { 'x-verification-proof': proof({ email: 'Mario.Rossi@example.com' }) },
    );
    expect(res.body.data.uid).toBe(uid);
    const claims = verifyProof(deps.secret, res.body.data.proof, deps.now(), ['verified']);
    expect(claims).toMatchObject({ email: 'Mario.Rossi@example.com', uid, linked: ['uid'] });
  });

  it('refuses an email that is not one with invalid_request', async () => {
    const { call } = identityApp();
    const res = await call('get_user_email', { email: 'not-an-email' }, internal);
    expect(res.body.data).toMatchObject({ reason: 'invalid_request', issues: [{ path: 'email' }] });
  });
});
