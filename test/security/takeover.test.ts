import { ATTACKER_PHONE, MARIO, proofClaims, tokenCookies, useSecurityApp } from './support';

/*
 * Account takeover replayed from outside with public requests only: a code proves only the
 * addresses it was delivered to, never the key the caller chose.
 */

describe('a code proves only the addresses it reached (primitives)', () => {
  const app = useSecurityApp();

  it('sends the code of otp_generate with the victim email as key and the attacker phone to the attacker phone only', async () => {
    const sent = await app().post('otp_generate', { uid: MARIO.email, phone: ATTACKER_PHONE });

    expect(sent.body).toMatchObject({ success: true, data: { notified: { sms: true, email: false } } });
    expect(app().codeFor(ATTACKER_PHONE)).toMatch(/^\d{6}$/);
    expect(app().messagesTo(MARIO.email)).toHaveLength(0);
    expect(app().messagesTo(MARIO.phone)).toHaveLength(0);
  });

  it('answers verify_otp under the victim email with a proof that names only the attacker phone', async () => {
    await app().post('otp_generate', { uid: MARIO.email, phone: ATTACKER_PHONE });

    const verified = await app().post('verify_otp', { email: MARIO.email, otp_code: app().codeFor(ATTACKER_PHONE) });

    expect(verified.body).toMatchObject({ success: true, data: { valid: true, proof: expect.any(String) } });
    const claims = proofClaims(verified.body.data.proof);
    expect(claims).toMatchObject({ kind: 'verified', phone: ATTACKER_PHONE });
    expect(claims).not.toHaveProperty('email');
    expect(claims).not.toHaveProperty('uid');
  });

  it('reveals no profile of the victim to get_user_email with the attacker-phone proof', async () => {
    await app().post('otp_generate', { uid: MARIO.email, phone: ATTACKER_PHONE });
    const verified = await app().post('verify_otp', { email: MARIO.email, otp_code: app().codeFor(ATTACKER_PHONE) });

    const profile = await app().post('get_user_email', { email: MARIO.email, proof: verified.body.data.proof });

    expect(profile.body.data).toBeNull();
    expect(profile.body.meta).toMatchObject({ limited: true });
    expect(JSON.stringify(profile.body)).not.toContain(MARIO.uid);
    expect(JSON.stringify(profile.body)).not.toContain(MARIO.phone.slice(1));
  });

  it('refuses access_token for the victim uid with the attacker-phone proof and sets no __utp cookie', async () => {
    await app().post('otp_generate', { uid: MARIO.email, phone: ATTACKER_PHONE });
    const verified = await app().post('verify_otp', { email: MARIO.email, otp_code: app().codeFor(ATTACKER_PHONE) });

    const token = await app().post('access_token', { uid: MARIO.uid, proof: verified.body.data.proof });

    expect(token.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(tokenCookies(token)).toHaveLength(0);
    expect(JSON.stringify(token.body)).not.toContain('access_token":"');
  });

  it('links the attacker-phone proof to no account through search_user, so no uid reaches the attacker', async () => {
    await app().post('otp_generate', { uid: MARIO.email, phone: ATTACKER_PHONE });
    const verified = await app().post('verify_otp', { email: MARIO.email, otp_code: app().codeFor(ATTACKER_PHONE) });

    const search = await app().post('search_user', { phone: ATTACKER_PHONE, proof: verified.body.data.proof });

    expect(search.body.meta).toMatchObject({ found: false, uid: null });
    expect(search.body.data?.proof).toBeUndefined();
  });
});

describe('a code mailed to the attacker under the victim email proves only the attacker email', () => {
  const app = useSecurityApp();
  const ATTACKER_EMAIL = 'attacker@example.com';

  it('answers verify_otp under the victim email with a proof naming only the attacker email, which opens no profile and no token', async () => {
    await app().post('otp_generate', { uid: MARIO.email, notify_email: ATTACKER_EMAIL });

    const verified = await app().post('verify_otp', { email: MARIO.email, otp_code: app().codeFor(ATTACKER_EMAIL) });
    const profile = await app().post('get_user_email', { email: MARIO.email, proof: verified.body.data.proof });
    const token = await app().post('access_token', { uid: MARIO.uid, proof: verified.body.data.proof });

    expect(app().messagesTo(MARIO.email)).toHaveLength(0);
    expect(proofClaims(verified.body.data.proof)).toMatchObject({ kind: 'verified', email: ATTACKER_EMAIL });
    expect(proofClaims(verified.body.data.proof)).not.toHaveProperty('uid');
    expect(profile.body).toMatchObject({ data: null, meta: { limited: true } });
    expect(token.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(tokenCookies(token)).toHaveLength(0);
  });

  it('refuses FeVerifyOtp on the victim email with a code that was mailed to the attacker under the victim key', async () => {
    await app().post('otp_generate', { uid: MARIO.email, notify_email: ATTACKER_EMAIL });

    const verified = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: MARIO.email,
      otp_code: app().codeFor(ATTACKER_EMAIL),
    });

    expect(verified.body).toMatchObject({ success: false, data: { reason: 'invalid' } });
    expect(verified.body.data).not.toHaveProperty('uid');
    expect(tokenCookies(verified)).toHaveLength(0);
  });

  it('refuses FeVerifyOtp on the victim email with a code that was sent to the attacker phone under the victim key', async () => {
    await app().post('otp_generate', { uid: MARIO.email, phone: ATTACKER_PHONE });

    const verified = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: MARIO.email,
      otp_code: app().codeFor(ATTACKER_PHONE),
    });

    expect(verified.body).toMatchObject({ success: false, data: { reason: 'invalid' } });
    expect(verified.body.data).not.toHaveProperty('uid');
    expect(tokenCookies(verified)).toHaveLength(0);
  });
});

describe('a code proves only the addresses it reached (Fe* and otp_generate rule 2)', () => {
  const app = useSecurityApp();

  it('does not mail a code to an attacker email named as notify_email beside the victim phone', async () => {
    const sent = await app().post('otp_generate', {
      uid: MARIO.phone,
      phone: MARIO.phone,
      notify_email: 'attacker@example.com',
    });

    expect(sent.body).toMatchObject({ success: true, data: { notified: { sms: true, email: false } } });
    expect(app().messagesTo('attacker@example.com')).toHaveLength(0);
    expect(app().messagesTo(MARIO.phone)).toHaveLength(1);
  });

  it('refuses FeVerifyOtp on the victim phone with a code that was sent to the attacker phone under the victim key', async () => {
    await app().post('otp_generate', { uid: MARIO.phone, phone: ATTACKER_PHONE });
    const code = app().codeFor(ATTACKER_PHONE);

    const verified = await app().post('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: code });

    expect(verified.body).toMatchObject({ success: false, data: { reason: 'invalid' } });
    expect(verified.body.data).not.toHaveProperty('next_step');
    expect(verified.body.data).not.toHaveProperty('uid');
    expect(verified.body.data).not.toHaveProperty('access_token');
    expect(tokenCookies(verified)).toHaveLength(0);
    expect(app().messagesTo(MARIO.phone)).toHaveLength(0);
  });

  it('still sends one code by SMS and by mail when the phone and the email are one account', async () => {
    const sent = await app().post('otp_generate', { uid: MARIO.phone, phone: MARIO.phone, notify_email: MARIO.email });

    expect(sent.body).toMatchObject({ success: true, data: { notified: { sms: true, email: true } } });
    const smsCode = app().codeFor(MARIO.phone);
    expect(smsCode).toMatch(/^\d{6}$/);
    expect(app().codeFor(MARIO.email)).toBe(smsCode);
  });
});
