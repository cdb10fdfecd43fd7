import { testCtx } from '../support/context';
import { COOLDOWN_MS, fePhoneLogin, MARIO, primitivePhoneLogin, tokenCookies, useSecurityApp } from './support';

/*
 * Registration and the proofs behind it, replayed from outside with public requests only.
 * Proofs that change state are spent: a token, a registration or a profile change consumes the
 * proof that allowed it, and the answer hands out a fresh one for the next change. An email
 * registered on a phone proof alone goes back to the email's owner once they prove it, and
 * nobody but the owner can confirm it.
 */

describe('a proof that issued a token is spent', () => {
  const app = useSecurityApp();

  it('refuses a second access_token with the same proof as spent and sets no cookie', async () => {
    const { uid, proof } = await primitivePhoneLogin(app(), MARIO.phone);
    const first = await app().post('access_token', { uid, proof });
    expect(first.body).toMatchObject({
      success: true,
      data: { access_token: expect.any(String), proof: expect.any(String) },
    });

    const replay = await app().post('access_token', { uid, proof });

    expect(replay.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    expect(tokenCookies(replay)).toHaveLength(0);
  });

  it('accepts the fresh proof an access_token answers exactly once', async () => {
    const { uid, proof } = await primitivePhoneLogin(app(), MARIO.phone);
    const first = await app().post('access_token', { uid, proof });
    const fresh = first.body.data.proof as string;

    const second = await app().post('access_token', { uid, proof: fresh });
    const third = await app().post('access_token', { uid, proof: fresh });

    expect(second.body).toMatchObject({ success: true, data: { access_token: expect.any(String) } });
    expect(tokenCookies(second)).toHaveLength(1);
    expect(third.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
  });
});

describe('a phone proof registers one account (primitives, phone new user)', () => {
  const app = useSecurityApp();
  const PHONE = '+393337770011';

  async function verifiedNewPhone(): Promise<string> {
    await app().post('otp_generate', { uid: PHONE });
    const verified = await app().post('verify_otp', { email: PHONE, otp_code: app().codeFor(PHONE) });
    return verified.body.data.proof as string;
  }

  it('refuses a second register with the same phone proof as spent and creates no second account', async () => {
    const proof = await verifiedNewPhone();
    const first = await app().post('register', { email: 'first.owner@example.com', phone: PHONE, proof });
    expect(first.body).toMatchObject({ success: true, data: { uid: expect.any(String) } });

    const second = await app().post('register', { email: 'second.owner@example.com', phone: PHONE, proof });

    expect(second.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    const lookup = await app().post('get_user_email', { email: 'second.owner@example.com' });
    expect(lookup.body.meta).toMatchObject({ exists: false });
  });

  it('refuses register with the proof the first registration answered, for another email, as not vouching for that email, and creates no second account', async () => {
    const proof = await verifiedNewPhone();
    const first = await app().post('register', { email: 'first.owner@example.com', phone: PHONE, proof });
    expect(first.body).toMatchObject({ success: true, data: { proof: expect.any(String) } });

    const second = await app().post('register', {
      email: 'second.owner@example.com',
      phone: PHONE,
      proof: first.body.data.proof,
    });

    // The answered proof names the first email: for another one it vouches for nothing.
    expect(second.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    const lookup = await app().post('get_user_email', { email: 'second.owner@example.com' });
    expect(lookup.body.meta).toMatchObject({ exists: false });
  });

  it('refuses register with the proof the first registration answered, for the same email, as registered', async () => {
    const proof = await verifiedNewPhone();
    const first = await app().post('register', { email: 'first.owner@example.com', phone: PHONE, proof });

    const again = await app().post('register', {
      email: 'first.owner@example.com',
      phone: PHONE,
      proof: first.body.data.proof,
    });

    expect(again.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'registered' } });
  });
});

describe('a phone proof registers one account (Fe*)', () => {
  const app = useSecurityApp();
  const PHONE = '+393337770001';
  const FIRST = 'anna.prima@example.com';
  const SECOND = 'bruno.secondo@example.com';

  /** 14 -> 24, two email_otp with the one phone_proof, both email codes verified: two register_proofs. */
  async function twoRegisterProofs(): Promise<[string, string]> {
    await app().post('FeLogin', { identifier: PHONE });
    const at24 = await app().post('FeVerifyOtp', { flow: 'phone', phone: PHONE, otp_code: app().codeFor(PHONE) });
    expect(at24.body.data).toMatchObject({ next_step: 24, phone_proof: expect.any(String) });
    const phoneProof = at24.body.data.phone_proof as string;
    const proofs: string[] = [];
    for (const email of [FIRST, SECOND]) {
      const at23 = await app().post('FeRegister', {
        phase: 'email_otp',
        email,
        phone: PHONE,
        otp: true,
        phone_proof: phoneProof,
      });
      expect(at23.body.data).toMatchObject({
        next_step: 23,
        flow: 'phone_register',
        pending_proof: expect.any(String),
      });
      const at25 = await app().post('FeVerifyOtp', {
        flow: 'phone_register',
        email,
        phone: PHONE,
        otp_code: app().codeFor(email),
        pending_proof: at23.body.data.pending_proof,
      });
      expect(at25.body.data).toMatchObject({ next_step: 25, register_proof: expect.any(String) });
      proofs.push(at25.body.data.register_proof as string);
    }
    return [proofs[0]!, proofs[1]!];
  }

  const registerWith = (email: string, registerProof: string) =>
    app().post('FeRegister', {
      phase: 'register',
      email,
      phone: PHONE,
      first_name: 'Nuovo',
      last_name: 'Utente',
      consents: { terms_conditions: true },
      register_proof: registerProof,
    });

  it('registers with the first register_proof derived from one phone_proof and refuses the second as spent', async () => {
    const [first, second] = await twoRegisterProofs();

    const registered = await registerWith(FIRST, first);
    const refused = await registerWith(SECOND, second);

    expect(registered.body).toMatchObject({
      success: true,
      data: { next_step: 90, uid: expect.any(String), access_token: expect.any(String) },
    });
    expect(refused.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    expect(tokenCookies(refused)).toHaveLength(0);
    const lookup = await app().post('get_user_email', { email: SECOND });
    expect(lookup.body.meta).toMatchObject({ exists: false });
  });

  it('refuses to continue a further email registration from a phone_proof that already registered an account', async () => {
    await app().post('FeLogin', { identifier: PHONE });
    const at24 = await app().post('FeVerifyOtp', { flow: 'phone', phone: PHONE, otp_code: app().codeFor(PHONE) });
    const phoneProof = at24.body.data.phone_proof as string;
    const at23 = await app().post('FeRegister', {
      phase: 'email_otp',
      email: FIRST,
      phone: PHONE,
      otp: true,
      phone_proof: phoneProof,
    });
    const at25 = await app().post('FeVerifyOtp', {
      flow: 'phone_register',
      email: FIRST,
      phone: PHONE,
      otp_code: app().codeFor(FIRST),
      pending_proof: at23.body.data.pending_proof,
    });
    expect((await registerWith(FIRST, at25.body.data.register_proof)).body.data).toMatchObject({ next_step: 90 });
    const later = await app().post('FeRegister', {
      phase: 'email_otp',
      email: SECOND,
      phone: PHONE,
      otp: true,
      phone_proof: phoneProof,
    });

    const refused = await app().post('FeVerifyOtp', {
      flow: 'phone_register',
      email: SECOND,
      phone: PHONE,
      otp_code: app().codeFor(SECOND),
      pending_proof: later.body.data?.pending_proof,
    });

    expect(refused.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
    expect(refused.body.data).not.toHaveProperty('register_proof');
  });
});

describe('a profile proof changes the profile once', () => {
  const app = useSecurityApp();

  it('lets exactly one of 20 concurrent FeUpdateProfile with one proof succeed', async () => {
    const login = await fePhoneLogin(app(), MARIO.phone);
    expect(login).toMatchObject({ next_step: 90, uid: MARIO.uid, proof: expect.any(String) });

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app().post('FeUpdateProfile', { uid: MARIO.uid, city: `Città ${i}`, proof: login.proof }),
      ),
    );

    const succeeded = answers.filter((res) => res.body.success === true);
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]!.body.data).toMatchObject({ next_step: 90, done: true });
    const refusals = answers.filter((res) => res.body.success !== true).map((res) => res.body.data);
    expect(refusals).toHaveLength(19);
    for (const refusal of refusals) expect(refusal).toMatchObject({ reason: 'invalid_proof', why: 'spent' });
  });
});

describe('an email registered on a phone proof alone is not the registrant’s for good', () => {
  const app = useSecurityApp();
  const REGISTRANT_PHONE = '+393337770021';
  const VICTIM_EMAIL = 'victim.new@example.com';

  /** The registrant verifies their phone, registers the victim's email with it and attaches the phone. */
  async function registrantTakesTheEmail(): Promise<{ uid: string; proof: string }> {
    await app().post('otp_generate', { uid: REGISTRANT_PHONE });
    const verified = await app().post('verify_otp', {
      email: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });
    const registered = await app().post('register', {
      email: VICTIM_EMAIL,
      phone: REGISTRANT_PHONE,
      proof: verified.body.data.proof,
    });
    expect(registered.body).toMatchObject({
      success: true,
      data: { uid: expect.any(String), proof: expect.any(String) },
    });
    const uid = registered.body.data.uid as string;
    const attached = await app().post('update_profile', {
      uid,
      otp_phone: REGISTRANT_PHONE,
      proof: registered.body.data.proof,
    });
    expect(attached.body).toMatchObject({ success: true, data: { calls: ['custom'], proof: expect.any(String) } });
    return { uid, proof: attached.body.data.proof as string };
  }

  /** The registrant's phone login with the primitives: search_user, otp_generate, verify_otp, search_user, access_token. */
  async function registrantPrimitiveLogin() {
    const before = await app().post('search_user', { phone: REGISTRANT_PHONE });
    await app().post('otp_generate', { uid: REGISTRANT_PHONE });
    const verified = await app().post('verify_otp', {
      email: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });
    const found = await app().post('search_user', { phone: REGISTRANT_PHONE, proof: verified.body.data.proof });
    const token = found.body.meta?.uid
      ? await app().post('access_token', { uid: found.body.meta.uid, proof: found.body.data.proof })
      : undefined;
    return { before, verified, found, token };
  }

  it('lets the registrant log in by phone with the primitives while the email’s owner has not proved it', async () => {
    const { uid } = await registrantTakesTheEmail();
    app().tick(COOLDOWN_MS);

    const { before, found, token } = await registrantPrimitiveLogin();

    expect(before.body.meta).toMatchObject({ found: true });
    expect(found.body.meta).toMatchObject({ found: true, uid });
    expect(token?.body).toMatchObject({ success: true, data: { access_token: expect.any(String) } });
  });

  /** The email's owner logs in by email code: step 65, a code sent to the phone on the account (the registrant's). */
  async function ownerProvesEmail(): Promise<{ pending: string; answer: Record<string, unknown> }> {
    app().tick(COOLDOWN_MS);
    await app().post('FeLogin', { identifier: VICTIM_EMAIL });
    const owner = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: VICTIM_EMAIL,
      otp_code: app().codeFor(VICTIM_EMAIL),
    });
    expect(owner.body.data).toMatchObject({ next_step: 65, pending_proof: expect.any(String) });
    return { pending: owner.body.data.pending_proof as string, answer: owner.body.data as Record<string, unknown> };
  }

  /** The registrant's phone login through the journey: FeLogin, then the SMS code. */
  async function registrantFeLogin() {
    app().tick(COOLDOWN_MS);
    await app().post('FeLogin', { identifier: REGISTRANT_PHONE });
    return app().post('FeVerifyOtp', {
      flow: 'phone',
      phone: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });
  }

  it('gives the email’s owner step 65 with the registrant’s phone masked, and 61 without it once they say it is not theirs', async () => {
    const { uid } = await registrantTakesTheEmail();
    const sms = app().messagesTo(REGISTRANT_PHONE).length;

    const { pending, answer } = await ownerProvesEmail();

    expect(answer).toMatchObject({
      flow: 'email_with_phone',
      uid,
      phone_hint: '+39 *******021',
      otp: { notified: { sms: true, email: false } },
    });
    expect(JSON.stringify(answer)).not.toContain('7770021');
    // The code went to the phone on the account: the owner does not have it, the registrant cannot use it without the proof.
    expect(app().messagesTo(REGISTRANT_PHONE)).toHaveLength(sms + 1);
    const declined = await app().post('FeVerifyOtp', { flow: 'email_phone_declined', pending_proof: pending });
    expect(declined.body).toMatchObject({
      success: true,
      data: { next_step: 61, flow: 'email_add_phone', uid, proof: expect.any(String) },
    });
    expect(declined.body.data).not.toHaveProperty('phone_hint');
    // The declined choice is spent: its proof neither keeps the phone nor declines again.
    const keptAfter = await app().post('FeVerifyOtp', {
      flow: 'email_with_phone',
      otp_code: app().codeFor(REGISTRANT_PHONE),
      pending_proof: pending,
    });
    expect(keptAfter.body).toMatchObject({ success: false, data: { reason: 'invalid_proof' } });
    expect(tokenCookies(keptAfter)).toHaveLength(0);
    const declinedAgain = await app().post('FeVerifyOtp', { flow: 'email_phone_declined', pending_proof: pending });
    expect(declinedAgain.body).toMatchObject({ success: false, data: { reason: 'invalid_proof' } });
  });

  it('keeps the phone of an honest phone registrant who proves both: 65, the SMS code, 90; the email confirmed, the phone still logs them in', async () => {
    const { uid } = await registrantTakesTheEmail();
    const { pending } = await ownerProvesEmail();

    const kept = await app().post('FeVerifyOtp', {
      flow: 'email_with_phone',
      otp_code: app().codeFor(REGISTRANT_PHONE),
      pending_proof: pending,
    });

    expect(kept.body).toMatchObject({
      success: true,
      data: { next_step: 90, done: true, flow: 'email_with_phone', uid, access_token: expect.any(String) },
    });
    expect(tokenCookies(kept)).toHaveLength(1);
    const account = await app().deps.identity.findUserByEmail(testCtx, VICTIM_EMAIL);
    expect(account?.email_confirmation_state?.toLowerCase()).toBe('confirmed');
    const profile = await app().deps.identity.getUser(testCtx, uid);
    expect(profile?.custom_fields?.find((f) => f.field_name === 'otp_phone')?.value).toBe(REGISTRANT_PHONE.slice(1));
    await expect(app().deps.otp.phoneHeldFor(REGISTRANT_PHONE)).resolves.toBeNull();
    const replay = await app().post('FeVerifyOtp', {
      flow: 'email_with_phone',
      otp_code: app().codeFor(REGISTRANT_PHONE),
      pending_proof: pending,
    });
    expect(replay.body).toMatchObject({ success: false });
    const phoneLogin = await registrantFeLogin();
    expect(phoneLogin.body).toMatchObject({ success: true, data: { next_step: 90, uid } });
  });

  it('refuses the registrant’s phone login while the owner has not chosen, and after they declined', async () => {
    const { uid } = await registrantTakesTheEmail();
    const { pending } = await ownerProvesEmail();

    const during = await registrantFeLogin();
    expect(during.body).toMatchObject({ success: false, data: { reason: 'phone_on_hold' } });
    expect(tokenCookies(during)).toHaveLength(0);

    await app().post('FeVerifyOtp', { flow: 'email_phone_declined', pending_proof: pending });
    const after = await registrantFeLogin();
    expect(after.body).toMatchObject({ success: true, data: { next_step: 24, flow: 'phone_register' } });
    expect(JSON.stringify(after.body)).not.toContain(uid);
    expect(tokenCookies(after)).toHaveLength(0);
  });

  it('refuses the registrant the owner’s choice: the step-65 proof is the owner’s, and a code alone names no one', async () => {
    await registrantTakesTheEmail();
    await ownerProvesEmail();
    // The registrant holds the phone and reads the step-65 code, but not the owner's pending proof.
    const withoutProof = await app().post('FeVerifyOtp', {
      flow: 'email_with_phone',
      phone: REGISTRANT_PHONE,
      email: VICTIM_EMAIL,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });
    expect(withoutProof.body).toMatchObject({ success: false });
    expect(tokenCookies(withoutProof)).toHaveLength(0);
    const declineWithoutProof = await app().post('FeVerifyOtp', { flow: 'email_phone_declined' });
    expect(declineWithoutProof.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
  });

  it('lets the owner’s choice lapse into the claim: after the proof lifetime the phone is the registrant’s no more, the owner asked for a phone', async () => {
    const { uid } = await registrantTakesTheEmail();
    const { pending } = await ownerProvesEmail();
    app().tick(app().deps.config.security.proof_ttl_seconds * 1000 + 1000);

    const late = await app().post('FeVerifyOtp', {
      flow: 'email_with_phone',
      otp_code: app().codeFor(REGISTRANT_PHONE),
      pending_proof: pending,
    });
    expect(late.body).toMatchObject({ success: false, data: { reason: 'invalid_proof' } });
    const registrant = await registrantFeLogin();
    expect(registrant.body).toMatchObject({ success: true, data: { next_step: 24, flow: 'phone_register' } });
    app().tick(COOLDOWN_MS);
    await app().post('FeLogin', { identifier: VICTIM_EMAIL });
    const owner = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: VICTIM_EMAIL,
      otp_code: app().codeFor(VICTIM_EMAIL),
    });
    expect(owner.body).toMatchObject({ success: true, data: { next_step: 61, flow: 'email_add_phone', uid } });
  });

  it('no longer lets the registrant’s phone login reach the account once the email’s owner proved the email and declined the phone', async () => {
    const { uid } = await registrantTakesTheEmail();
    const { pending } = await ownerProvesEmail();
    await app().post('FeVerifyOtp', { flow: 'email_phone_declined', pending_proof: pending });

    const registrant = await registrantFeLogin();

    expect(registrant.body).toMatchObject({ success: true, data: { next_step: 24, flow: 'phone_register' } });
    expect(registrant.body.data).not.toHaveProperty('uid');
    expect(registrant.body.data).not.toHaveProperty('access_token');
    expect(JSON.stringify(registrant.body)).not.toContain(uid);
    expect(tokenCookies(registrant)).toHaveLength(0);
  });

  it('no longer lets the registrant reach the account with the primitives once the email’s owner proved the email', async () => {
    const { uid } = await registrantTakesTheEmail();
    await ownerProvesEmail();
    app().tick(COOLDOWN_MS);

    const { before, verified, found, token } = await registrantPrimitiveLogin();

    expect(before.body.meta).toMatchObject({ found: false });
    expect(found.body.meta).toMatchObject({ found: false, uid: null });
    expect(token).toBeUndefined();
    const direct = await app().post('access_token', { uid, proof: verified.body.data.proof });
    expect(direct.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
  });

  /** The email's owner logs in by email code and declines the phone on the account, then the registrant logs in by phone: what each one reaches. */
  async function ownerThenRegistrantLogIn() {
    const { pending } = await ownerProvesEmail();
    const owner = await app().post('FeVerifyOtp', { flow: 'email_phone_declined', pending_proof: pending });
    const registrant = await registrantFeLogin();
    return { owner, registrant };
  }

  it('refuses doi_confirm by the registrant with the proof their registration chain answered', async () => {
    const { uid, proof } = await registrantTakesTheEmail();

    const doi = await app().post('doi_confirm', { uid, proof });

    expect(doi.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
  });

  // Once the registrant's phone is on the account, otp_generate rule 2 sees "one account holds both" and mails the
  // code to the unproven email too: the registrant reads it by SMS, and the proof then names the email as verified.
  it('does not let the registrant confirm the email with doi_confirm after a code sent to their phone and the registered email together', async () => {
    const { uid, proof } = await registrantTakesTheEmail();
    app().tick(COOLDOWN_MS);
    await app().post('otp_generate', { uid: REGISTRANT_PHONE, phone: REGISTRANT_PHONE, notify_email: VICTIM_EMAIL });
    const verified = await app().post('verify_otp', {
      email: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
      proof,
    });
    await app().post('doi_confirm', { uid, proof: verified.body.data?.proof });

    const { owner, registrant } = await ownerThenRegistrantLogIn();

    expect(owner.body).toMatchObject({ success: true, data: { next_step: 61, uid } });
    expect(registrant.body).toMatchObject({ success: true, data: { next_step: 24, flow: 'phone_register' } });
    expect(registrant.body.data).not.toHaveProperty('uid');
  });

  it('does not let the registrant claim the email through the email login with a code sent to their phone and the registered email together', async () => {
    const { uid } = await registrantTakesTheEmail();
    app().tick(COOLDOWN_MS);
    await app().post('otp_generate', { uid: VICTIM_EMAIL, phone: REGISTRANT_PHONE, notify_email: VICTIM_EMAIL });
    const viaEmailFlow = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: VICTIM_EMAIL,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });

    expect(viaEmailFlow.body).toMatchObject({ success: false, data: { reason: 'invalid' } });
    const { owner } = await ownerThenRegistrantLogIn();
    expect(owner.body).toMatchObject({ success: true, data: { next_step: 61, uid } });
  });

  it('does not let the registrant confirm the email with verify_otp is_registration after a code sent to their phone and the registered email together', async () => {
    const { uid, proof } = await registrantTakesTheEmail();
    app().tick(COOLDOWN_MS);
    await app().post('otp_generate', { uid: REGISTRANT_PHONE, phone: REGISTRANT_PHONE, notify_email: VICTIM_EMAIL });
    await app().post('verify_otp', {
      email: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
      is_registration: true,
      uid,
      proof,
    });

    const { owner, registrant } = await ownerThenRegistrantLogIn();

    expect(owner.body).toMatchObject({ success: true, data: { next_step: 61, uid } });
    expect(registrant.body).toMatchObject({ success: true, data: { next_step: 24, flow: 'phone_register' } });
    expect(registrant.body.data).not.toHaveProperty('uid');
  });

  /** The email's owner logs in by email code (65) and declines the phone, so is told to add one (61): the account is claimed. */
  async function ownerClaims(): Promise<void> {
    const { owner } = await ownerThenRegistrantLogIn();
    expect(owner.body.data).toMatchObject({ next_step: 61 });
  }

  // The claim drops the phone and confirms the email, but proofs issued before it still bind the uid and the phone;
  // re-attached to a now confirmed account, the phone is never dropped again.
  it('refuses update_profile re-attaching the registrant’s phone with a proof issued before the email’s owner claimed the account', async () => {
    const { uid, proof } = await registrantTakesTheEmail();
    await ownerClaims();

    const reattach = await app().post('update_profile', { uid, otp_phone: REGISTRANT_PHONE, proof });

    expect(reattach.body).toMatchObject({ success: false });
    app().tick(COOLDOWN_MS);
    await app().post('FeLogin', { identifier: REGISTRANT_PHONE });
    const registrant = await app().post('FeVerifyOtp', {
      flow: 'phone',
      phone: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });
    expect(registrant.body.data).toMatchObject({ next_step: 24, flow: 'phone_register' });
  });

  it('refuses FeUpdateProfile re-attaching the registrant’s phone with the step-90 proof of a phone login made before the claim', async () => {
    const { uid } = await registrantTakesTheEmail();
    app().tick(COOLDOWN_MS);
    await app().post('FeLogin', { identifier: REGISTRANT_PHONE });
    const before = await app().post('FeVerifyOtp', {
      flow: 'phone',
      phone: REGISTRANT_PHONE,
      otp_code: app().codeFor(REGISTRANT_PHONE),
    });
    expect(before.body.data).toMatchObject({ next_step: 90, uid, proof: expect.any(String) });
    await ownerClaims();

    const reattach = await app().post('FeUpdateProfile', {
      uid,
      otp_phone: REGISTRANT_PHONE,
      proof: before.body.data.proof,
    });

    expect(reattach.body).toMatchObject({ success: false });
    expect(tokenCookies(reattach)).toHaveLength(0);
  });

  it('refuses access_token for the claimed account with a proof the registrant held from before the claim', async () => {
    const { uid, proof } = await registrantTakesTheEmail();
    await ownerClaims();

    const token = await app().post('access_token', { uid, proof });

    expect(token.body).toMatchObject({ success: false });
    expect(tokenCookies(token)).toHaveLength(0);
  });
});
