import { fixture, identityApp, intercept, internal, paths, useNock } from './support';

const uid = 'PNIn3wUs3r0001';
const email = 'nuovo.utente@example.com';

describe('doi_confirm', () => {
  useNock();

  it('confirms with a proof of the verified email binding the uid, and passes the reply through', async () => {
    const { call, proof } = identityApp();
    const { scope, seen } = intercept('POST', paths.doi, 200, fixture('doi-status'));
    const res = await call('doi_confirm', { uid, proof: proof({ email, uid, linked: ['uid'] }) });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query).toMatchObject({ uid, email_confirmation_state: 'CONFIRMED' });
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: { confirmed: true, uid, result: {}, proof: expect.any(String) },
    });
  });

  it('spends the proof: a replay confirms nothing, and the fresh proof of the answer works once', async () => {
    const { call, proof } = identityApp();
    const first = intercept('POST', paths.doi, 200, fixture('doi-status'));
    const used = proof({ email, uid, linked: ['uid'] });
    const res = await call('doi_confirm', { uid, proof: used });
    expect(first.scope.isDone()).toBe(true);
    const replay = await call('doi_confirm', { uid, proof: used });
    expect(replay.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    const second = intercept('POST', paths.doi, 200, fixture('doi-status'));
    expect((await call('doi_confirm', { uid, proof: res.body.data.proof })).body.success).toBe(true);
    expect(second.scope.isDone()).toBe(true);
  });

  it('gives the proof back when the provider fails, so the user can retry', async () => {
    const { call, proof } = identityApp();
    intercept('POST', paths.doi, 503, 'down');
    const used = proof({ email, uid, linked: ['uid'] });
    expect((await call('doi_confirm', { uid, proof: used })).body.data.reason).toBe('upstream_error');
    const retry = intercept('POST', paths.doi, 200, fixture('doi-status'));
    expect((await call('doi_confirm', { uid, proof: used })).body.success).toBe(true);
    expect(retry.scope.isDone()).toBe(true);
  });

  it('refuses a proof whose email was only linked, not verified by a code', async () => {
    const { call, proof } = identityApp();
    const { scope } = intercept('POST', paths.doi, 200, fixture('doi-status'));
    const res = await call('doi_confirm', {
      uid,
      proof: proof({ phone: '+393331234567', email, uid, linked: ['email', 'uid'] }),
    });
    expect(res.body.data.reason).toBe('proof_required');
    expect(scope.isDone()).toBe(false);
  });

  it('answers a refusal of the provider as upstream_error', async () => {
    const { call } = identityApp();
    intercept('POST', paths.doi, 200, { error_code_list: [{ message: 'User not found' }] });
    const res = await call('doi_confirm', { uid }, internal);
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'upstream_error', provider_errors: [{ code: null, message: 'User not found' }] },
    });
  });
});
