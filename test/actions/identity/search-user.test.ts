import { messageOf } from '../../../src/core/errors';
import { verifyProof } from '../../../src/domain/proofs';
import { fixture, formOf, identityApp, intercept, internal, paths, useNock } from './support';

const mario = { uid: 'PNIa7Xk2mR0ssi', email: 'mario.rossi@example.com', phone: '+393331234567' };

describe('search_user', () => {
  useNock();

  it('searches the stored digits of the phone and answers the raw result with meta to a trusted caller', async () => {
    const { call } = identityApp();
    const { scope, seen } = intercept('POST', paths.search, 200, fixture('user-search'));
    const res = await call('search_user', { phone: '+39 333 123 4567' }, internal);
    expect(scope.isDone()).toBe(true);
    expect(JSON.parse(formOf(seen[0]!).custom_fields!)[0].condition.value).toBe('393331234567');
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual(fixture('user-search'));
    expect(res.body.meta).toEqual({
      found: true,
      count: 1,
      uid: mario.uid,
      email: mario.email,
      has_otp_phone: true,
      otp_phone: '393331234567',
    });
  });

  it('answers only found, count and has_otp_phone to a caller without a proof', async () => {
    const { call } = identityApp();
    intercept('POST', paths.search, 200, fixture('user-search'));
    const res = await call('search_user', { phone: '3331234567' });
    expect(res.body.success).toBe(true);
    expect(res.body.data).toBeNull();
    expect(res.body.meta).toEqual({
      found: true,
      count: 1,
      uid: null,
      email: null,
      has_otp_phone: true,
      otp_phone: null,
      limited: true,
    });
  });

  it('answers in full with a proof for the phone and upgrades it to bind the account found', async () => {
    const { call, proof, deps } = identityApp();
    intercept('POST', paths.search, 200, fixture('user-search'));
    const res = await call('search_user', { phone: '3331234567', proof: proof({ phone: mario.phone }) });
    expect(res.body.meta.uid).toBe(mario.uid);
    expect(res.body.data.users).toHaveLength(1);
    const claims = verifyProof(deps.secret, res.body.data.proof, deps.now(), ['verified']);
    expect(claims).toMatchObject({ phone: mario.phone, uid: mario.uid, email: mario.email, linked: ['email', 'uid'] });
  });

  it('answers the limited view to a proof for another phone', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.search, 200, fixture('user-search'));
    const res = await call('search_user', { phone: '3331234567', proof: proof({ phone: '+393339999999' }) });
    expect(res.body.meta.limited).toBe(true);
    expect(res.body.data).toBeNull();
  });

  it('refuses a tampered proof with invalid_proof', async () => {
    const { call, proof } = identityApp();
    const genuine = proof({ phone: mario.phone });
    const res = await call('search_user', { phone: '3331234567', proof: `${genuine.slice(0, -2)}xx` });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof' } });
  });

  it('answers found false when nobody holds the phone', async () => {
    const { call } = identityApp();
    intercept('POST', paths.search, 200, fixture('user-search-empty'));
    const res = await call('search_user', { phone: '3330000000' }, internal);
    expect(res.body.meta).toEqual({
      found: false,
      count: 0,
      uid: null,
      email: null,
      has_otp_phone: false,
      otp_phone: null,
    });
  });

  it('never binds a user whose stored phone is another number, even if the provider returned it', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.search, 200, fixture('user-search'));
    const res = await call('search_user', { phone: '3337777777', proof: proof({ phone: '+393337777777' }) });
    expect(res.body.meta).toMatchObject({ found: false, uid: null });
    expect(res.body.data.proof).toBeUndefined();
  });

  it('refuses a value that is not a phone with invalid_request', async () => {
    const { call } = identityApp();
    const res = await call('search_user', { phone: 'mario' }, internal);
    expect(res.body).toMatchObject({
      success: false,
      error: messageOf('invalid_request'),
      data: { reason: 'invalid_request', issues: [{ path: 'phone' }] },
    });
  });
});
