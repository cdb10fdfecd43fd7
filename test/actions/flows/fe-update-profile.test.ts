import { useNock } from '../../support/nock';
import { fixture, formOf, intercept, internal, paths, setCookies } from '../identity/support';
import { useSmtp } from '../otp/harness';
import { collector, COLLECTOR_TOKEN, flowsApp, MARIO, searchReply, tokenFor } from './support';

describe('FeUpdateProfile', () => {
  useNock();
  const smtp = useSmtp();
  const proofFor = (stepProof: ReturnType<typeof flowsApp>['stepProof']) =>
    stepProof({ step: 90, flow: 'phone', uid: MARIO.uid, email: MARIO.email, phone: MARIO.phone });

  it('saves identity and custom fields, issues the token and answers 90, done, screen success, with cookie and ingest', async () => {
    const { call, deps, stepProof } = flowsApp(smtp.port());
    const ingest = collector();
    const search = intercept('POST', paths.search, 200, searchReply(MARIO));
    const identity = intercept('POST', paths.update, 200, fixture('user-update'));
    const custom = intercept('POST', paths.update, 200, fixture('user-update'));
    const token = intercept('POST', paths.token, 200, tokenFor(MARIO.uid));
    const res = await call('FeUpdateProfile', {
      uid: MARIO.uid,
      first_name: 'Mario',
      last_name: 'Rossi',
      city: 'Roma',
      birth_date: '1985-04-12',
      otp_phone: '333 1234567',
      stay_logged_in: false,
      proof: proofFor(stepProof),
    });

    const accessToken = tokenFor(MARIO.uid).access_token;
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: {
        next_step: 90,
        flow: 'phone',
        screen: 'success',
        done: true,
        uid: MARIO.uid,
        access_token: accessToken,
        proof: expect.any(String),
      },
    });
    expect(search.scope.isDone() && token.scope.isDone()).toBe(true);
    expect(formOf(identity.seen[0]!)).toEqual({ first_name: 'Mario', last_name: 'Rossi' });
    expect(identity.seen[0]!.query).toMatchObject({ uid: MARIO.uid });
    expect(custom.seen[0]!.body).toEqual({ city: 'Roma', birth_date: '1985-04-12', otp_phone: Number(MARIO.digits) });
    // stay_logged_in false: a session cookie (no Max-Age / Expires).
    const cookie = setCookies(res).find((c) => c.startsWith('__utp='))!;
    expect(cookie).toContain(`__utp=${accessToken}`);
    expect(cookie).not.toMatch(/expires=/i);
    await deps.loginIngest.drain(2000);
    expect(ingest.ingested).toEqual([{ body: { uid: MARIO.uid, accessToken }, token: COLLECTOR_TOKEN }]);
  });

  it('answers phone_taken and makes no update call when another uid holds otp_phone', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const search = intercept('POST', paths.search, 200, searchReply({ uid: 'PNIsomeoneelse' }));
    const update = intercept('POST', paths.update, 200, fixture('user-update'));
    const token = intercept('POST', paths.token, 200, tokenFor(MARIO.uid));
    const res = await call('FeUpdateProfile', {
      uid: MARIO.uid,
      city: 'Roma',
      otp_phone: MARIO.phone,
      proof: proofFor(stepProof),
    });
    expect(res.body).toEqual({
      success: false,
      error: 'Telefono già registrato su un altro account',
      data: { reason: 'phone_taken' },
    });
    expect(search.scope.isDone()).toBe(true);
    expect(update.scope.isDone() || token.scope.isDone()).toBe(false);
  });

  it('refuses an otp_phone other than the one the proof vouches for (phone_not_verified), searching nothing', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const search = intercept('POST', paths.search, 200, searchReply());
    const res = await call('FeUpdateProfile', {
      uid: MARIO.uid,
      otp_phone: '+393339876543',
      proof: proofFor(stepProof),
    });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'phone_not_verified', issues: [{ path: 'otp_phone' }] },
    });
    expect(search.scope.isDone()).toBe(false);
  });

  it('refuses a proof bound to another uid (invalid_proof) and updates nothing', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const update = intercept('POST', paths.update, 200, fixture('user-update'));
    const res = await call('FeUpdateProfile', { uid: 'PNIsomeoneelse', first_name: 'Eve', proof: proofFor(stepProof) });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof' } });
    expect(update.scope.isDone()).toBe(false);
  });

  it('refuses without a proof (proof_required) and updates nothing', async () => {
    const { call } = flowsApp(smtp.port());
    const update = intercept('POST', paths.update, 200, fixture('user-update'));
    const res = await call('FeUpdateProfile', { uid: MARIO.uid, city: 'Roma' });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(update.scope.isDone()).toBe(false);
  });

  it('lets a trusted caller (x-internal-key) update without a proof, the email included', async () => {
    const { call, deps } = flowsApp(smtp.port());
    collector();
    const identity = intercept('POST', paths.update, 200, fixture('user-update'));
    intercept('POST', paths.token, 200, tokenFor(MARIO.uid));
    const res = await call('FeUpdateProfile', { uid: MARIO.uid, email: 'mario.nuovo@example.com' }, internal);
    expect(res.body.data).toMatchObject({ next_step: 90, done: true, uid: MARIO.uid });
    expect(formOf(identity.seen[0]!)).toEqual({ email: 'mario.nuovo@example.com' });
    await deps.loginIngest.drain(2000);
  });

  it('accepts the proof in header x-verification-proof', async () => {
    const { call, deps, stepProof } = flowsApp(smtp.port());
    collector();
    intercept('POST', paths.update, 200, fixture('user-update'));
    intercept('POST', paths.token, 200, tokenFor(MARIO.uid));
    const res = await call(
      'FeUpdateProfile',
      { uid: MARIO.uid, city: 'Roma' },
      { 'x-verification-proof': proofFor(stepProof) },
    );
    expect(res.body.data).toMatchObject({ next_step: 90, done: true });
    await deps.loginIngest.drain(2000);
  });
});
