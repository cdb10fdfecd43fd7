import { GIULIA, MARIO, tokenCookies, useSecurityApp } from './support';

/*
 * The legitimate journeys still work end to end under the rebuilt security model, with public
 * requests only: each answer's proof is carried into the next request, codes read from the
 * sandbox outbox by recipient.
 */

describe('legitimate journeys', () => {
  const app = useSecurityApp();

  it('logs Mario in by phone with the primitives: search_user, otp_generate, verify_otp, search_user, access_token', async () => {
    const before = await app().post('search_user', { phone: '+39 333 123 4567' });
    const sent = await app().post('otp_generate', { uid: '+39 333 123 4567' });
    const verified = await app().post('verify_otp', { email: MARIO.phone, otp_code: app().codeFor(MARIO.phone) });
    const found = await app().post('search_user', { phone: MARIO.phone, proof: verified.body.data.proof });

    const token = await app().post('access_token', { uid: found.body.meta.uid, proof: found.body.data.proof });

    expect(before.body).toMatchObject({
      success: true,
      data: null,
      meta: { found: true, has_otp_phone: true, uid: null, limited: true },
    });
    expect(sent.body).toMatchObject({ success: true, data: { notified: { sms: true, email: false } } });
    expect(verified.body).toMatchObject({ success: true, data: { valid: true, proof: expect.any(String) } });
    expect(found.body.meta).toMatchObject({ found: true, uid: MARIO.uid, email: MARIO.email });
    expect(token.body).toMatchObject({
      success: true,
      data: { access_token: expect.any(String), proof: expect.any(String) },
    });
    expect(tokenCookies(token)[0]).toContain(`__utp=${token.body.data.access_token}`);
  });

  it('logs Mario in by phone with FeLogin and FeVerifyOtp: 14, then 90 with a token', async () => {
    const started = await app().post('FeLogin', { identifier: '+39 333 123 4567' });

    const done = await app().post('FeVerifyOtp', {
      flow: 'phone',
      phone: MARIO.phone,
      otp_code: app().codeFor(MARIO.phone),
    });

    expect(started.body.data).toMatchObject({
      next_step: 14,
      flow: 'phone',
      otp: { notified: { sms: true, email: false } },
    });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      screen: 'success',
      done: true,
      uid: MARIO.uid,
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    expect(tokenCookies(done)[0]).toContain(`__utp=${done.body.data.access_token}`);
  });

  it('logs Mario in by email: 33, then 90 because the account has a phone', async () => {
    const started = await app().post('FeLogin', { identifier: MARIO.email });

    const done = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: MARIO.email,
      otp_code: app().codeFor(MARIO.email),
    });

    expect(started.body.data).toMatchObject({ next_step: 33, flow: 'email' });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      flow: 'email_with_phone',
      uid: MARIO.uid,
      access_token: expect.any(String),
    });
    expect(tokenCookies(done)).toHaveLength(1);
  });

  it('takes Giulia, who has no phone, through 61, 62 and 90, then completes her profile', async () => {
    const phone = '+393335550101';
    await app().post('FeLogin', { identifier: GIULIA.email });
    const at61 = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: GIULIA.email,
      otp_code: app().codeFor(GIULIA.email),
    });
    const at62 = await app().post('FeAddPhone', {
      flow: 'email_add_phone',
      phone: '+39 333 555 0101',
      uid: GIULIA.uid,
      email: GIULIA.email,
      proof: at61.body.data.proof,
    });
    const at90 = await app().post('FeVerifyOtp', {
      flow: at62.body.data.flow,
      phone,
      uid: GIULIA.uid,
      otp_code: app().codeFor(phone),
      pending_proof: at62.body.data.pending_proof,
    });

    const profile = await app().post('FeUpdateProfile', {
      uid: GIULIA.uid,
      city: 'Genova',
      birth_date: '1990-03-04',
      proof: at90.body.data.proof,
    });

    expect(at61.body.data).toMatchObject({
      next_step: 61,
      flow: 'email_add_phone',
      uid: GIULIA.uid,
      proof: expect.any(String),
    });
    expect(at62.body.data).toMatchObject({
      next_step: 62,
      screen: 'otp_phone',
      otp: { notified: { sms: true, email: false } },
      pending_proof: expect.any(String),
    });
    expect(at90.body.data).toMatchObject({
      next_step: 90,
      uid: GIULIA.uid,
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    expect(profile.body.data).toMatchObject({
      next_step: 90,
      done: true,
      screen: 'success',
      access_token: expect.any(String),
    });
    const found = await app().post('search_user', { phone });
    expect(found.body.meta).toMatchObject({ found: true });
  });

  it('registers a new user by email, adds a phone, completes the profile, and the phone then logs in', async () => {
    const email = 'sara.neri@example.com';
    const phone = '+393337770707';
    const at23 = await app().post('FeRegister', { phase: 'email_otp', email, otp: true });
    const at37 = await app().post('FeVerifyOtp', {
      flow: 'email_register',
      email,
      otp_code: app().codeFor(email),
      pending_proof: at23.body.data.pending_proof,
    });
    const registered = await app().post('FeRegister', {
      phase: 'register',
      email,
      first_name: 'Sara',
      last_name: 'Neri',
      consents: { terms_conditions: true },
      register_proof: at37.body.data.register_proof,
    });
    const uid = registered.body.data.uid as string;
    const at62 = await app().post('FeAddPhone', {
      flow: 'email_register_phone',
      phone: '+39 333 777 0707',
      uid,
      email,
      proof: registered.body.data.proof,
    });
    const phoneDone = await app().post('FeVerifyOtp', {
      flow: 'email_register_phone',
      phone,
      uid,
      otp_code: app().codeFor(phone),
      pending_proof: at62.body.data.pending_proof,
    });

    const profile = await app().post('FeUpdateProfile', {
      uid,
      city: 'Bologna',
      birth_date: '1992-06-15',
      proof: phoneDone.body.data.proof,
    });

    expect(at23.body.data).toMatchObject({ next_step: 23, flow: 'email_register', pending_proof: expect.any(String) });
    expect(at37.body.data).toMatchObject({ next_step: 37, register_proof: expect.any(String) });
    expect(registered.body.data).toMatchObject({
      next_step: 90,
      flow: 'email_register_phone',
      uid: expect.any(String),
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    expect(at62.body.data).toMatchObject({ next_step: 62, screen: 'otp_phone', pending_proof: expect.any(String) });
    expect(phoneDone.body.data).toMatchObject({ next_step: 90, uid, proof: expect.any(String) });
    expect(profile.body.data).toMatchObject({
      next_step: 90,
      done: true,
      screen: 'success',
      access_token: expect.any(String),
    });
    app().tick(61_000);
    await app().post('FeLogin', { identifier: phone });
    const phoneLogin = await app().post('FeVerifyOtp', { flow: 'phone', phone, otp_code: app().codeFor(phone) });
    expect(phoneLogin.body.data).toMatchObject({ next_step: 90, uid });
  });

  it('registers a new user by phone: 14, 24, 23, 25, then 90 with the verified phone saved', async () => {
    const phone = '+393337770031';
    const email = 'nina.neri@example.com';
    const at14 = await app().post('FeLogin', { identifier: phone });
    const at24 = await app().post('FeVerifyOtp', { flow: 'phone', phone, otp_code: app().codeFor(phone) });
    const at23 = await app().post('FeRegister', {
      phase: 'email_otp',
      email,
      phone,
      otp: true,
      phone_proof: at24.body.data.phone_proof,
    });
    const at25 = await app().post('FeVerifyOtp', {
      flow: 'phone_register',
      email,
      phone,
      otp_code: app().codeFor(email),
      pending_proof: at23.body.data.pending_proof,
    });

    const done = await app().post('FeRegister', {
      phase: 'register',
      email,
      phone,
      first_name: 'Nina',
      last_name: 'Neri',
      city: 'Roma',
      consents: { terms_conditions: true },
      register_proof: at25.body.data.register_proof,
    });

    expect(at14.body.data).toMatchObject({ next_step: 14, flow: 'phone' });
    expect(at24.body.data).toMatchObject({ next_step: 24, flow: 'phone_register', phone_proof: expect.any(String) });
    expect(at23.body.data).toMatchObject({
      next_step: 23,
      flow: 'phone_register',
      otp: { notified: { sms: false, email: true } },
      pending_proof: expect.any(String),
    });
    expect(at25.body.data).toMatchObject({ next_step: 25, flow: 'phone_register', register_proof: expect.any(String) });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      flow: 'phone_register',
      screen: 'success',
      done: true,
      uid: expect.any(String),
      access_token: expect.any(String),
    });
    expect(tokenCookies(done)).toHaveLength(1);
    const found = await app().post('search_user', { phone });
    expect(found.body.meta).toMatchObject({ found: true });
  });

  it('registers a new user by phone with the primitives, each change answering the fresh proof the next one uses', async () => {
    const phone = '+393337770041';
    const email = 'paolo.gialli@example.com';
    const sent = await app().post('otp_generate', { uid: phone });
    const verified = await app().post('verify_otp', { email: phone, otp_code: app().codeFor(phone) });
    const search = await app().post('search_user', { phone, proof: verified.body.data.proof });
    const registered = await app().post('register', { email, phone, proof: verified.body.data.proof });
    const uid = registered.body.data.uid as string;
    const updated = await app().post('update_profile', {
      uid,
      otp_phone: phone,
      city: 'Napoli',
      proof: registered.body.data.proof,
    });

    const token = await app().post('access_token', { uid, proof: updated.body.data.proof });

    expect(sent.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
    expect(verified.body).toMatchObject({ success: true, data: { valid: true, proof: expect.any(String) } });
    expect(search.body.meta).toMatchObject({ found: false });
    expect(registered.body).toMatchObject({
      success: true,
      data: { uid: expect.any(String), proof: expect.any(String) },
    });
    expect(registered.body.data.proof).not.toBe(verified.body.data.proof);
    expect(updated.body).toMatchObject({ success: true, data: { calls: ['custom'], proof: expect.any(String) } });
    expect(updated.body.data.proof).not.toBe(registered.body.data.proof);
    expect(token.body).toMatchObject({
      success: true,
      data: { access_token: expect.any(String), proof: expect.any(String) },
    });
    expect(tokenCookies(token)[0]).toContain(`__utp=${token.body.data.access_token}`);
    const holder = await app().post('search_user', { phone });
    expect(holder.body.meta).toMatchObject({ found: true });
  });
});
