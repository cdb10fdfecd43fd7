import { gzipSync } from 'node:zlib';
import { COOLDOWN_MS, GIULIA, MARIO, startSecurityApp, useSecurityApp, type SecurityApp } from './support';

/*
 * Abuse replayed from outside: SMS bombing through many keys, guessing, toll fraud, phone
 * enumeration, password guessing and bodies a page on another origin (or a lying
 * Content-Encoding) can send, each shown refused, with nothing sent.
 */

describe('sends are charged to the address that receives them', () => {
  const app = useSecurityApp();
  const VICTIM_PHONE = '+393339990002';

  it('sends one SMS for six otp_generate with six different keys and one phone within the cooldown', async () => {
    const keys = ['k1@x.test', 'k2@x.test', 'k3@x.test', 'k4@x.test', 'k5@x.test', 'k6@x.test'];

    const answers = [];
    for (const uid of keys) answers.push(await app().post('otp_generate', { uid, phone: VICTIM_PHONE }));

    expect(answers[0]!.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
    for (const refused of answers.slice(1)) {
      expect(refused.body).toMatchObject({
        success: false,
        data: { reason: 'already_sent', retry_after: expect.any(Number) },
      });
      expect(refused.body.data.retry_after).toBeGreaterThan(0);
    }
    expect(app().messagesTo(VICTIM_PHONE)).toHaveLength(1);
  });

  it('sends one SMS for otp_generate with arbitrary-string keys and one phone within the cooldown', async () => {
    const first = await app().post('otp_generate', { uid: 'anything-at-all', phone: VICTIM_PHONE });

    const second = await app().post('otp_generate', { uid: 'something-else', phone: VICTIM_PHONE });

    expect(first.body).toMatchObject({ success: true });
    expect(second.body).toMatchObject({ success: false, data: { reason: 'already_sent' } });
    expect(app().messagesTo(VICTIM_PHONE)).toHaveLength(1);
  });

  it('refuses the sixth code to one phone within ten minutes with 429 sends_per_recipient, even past each cooldown and with new keys', async () => {
    for (let i = 1; i <= 5; i++) {
      const sent = await app().post('otp_generate', { uid: `key${i}@x.test`, phone: VICTIM_PHONE });
      expect(sent.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
      app().tick(COOLDOWN_MS);
    }

    const sixth = await app().post('otp_generate', { uid: 'key6@x.test', phone: VICTIM_PHONE });

    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({
      success: false,
      data: { reason: 'rate_limited', limit: 'sends_per_recipient', retry_after: expect.any(Number) },
    });
    expect(sixth.headers['retry-after']).toBe(String(sixth.body.data.retry_after));
    expect(app().messagesTo(VICTIM_PHONE)).toHaveLength(5);
  });
});

describe('a code burned by wrong guesses keeps its cooldown', () => {
  const app = useSecurityApp();
  const PHONE = '+393339990003';

  async function burnCode(): Promise<{ code: string; guesses: Array<Record<string, unknown>> }> {
    await app().post('otp_generate', { uid: PHONE });
    const code = app().codeFor(PHONE)!;
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const guesses = [];
    for (let i = 0; i < 5; i++) guesses.push((await app().post('verify_otp', { email: PHONE, otp_code: wrong })).body);
    return { code, guesses };
  }

  it('burns a code after five wrong guesses, the last answering too_many_attempts', async () => {
    const { guesses } = await burnCode();

    for (const guess of guesses.slice(0, 4))
      expect(guess).toMatchObject({ success: false, data: { reason: 'invalid' } });
    expect(guesses[4]).toMatchObject({ success: false, data: { reason: 'too_many_attempts', valid: false } });
  });

  it('answers too_many_attempts to the right code once it is burned', async () => {
    const { code } = await burnCode();

    const right = await app().post('verify_otp', { email: PHONE, otp_code: code });

    expect(right.body).toMatchObject({ success: false, data: { reason: 'too_many_attempts' } });
    expect(right.body.data).not.toHaveProperty('proof');
  });

  it('answers already_sent to an immediate otp_generate after the code is burned, and sends nothing', async () => {
    await burnCode();

    const resend = await app().post('otp_generate', { uid: PHONE });

    expect(resend.body).toMatchObject({
      success: false,
      data: { reason: 'already_sent', retry_after: expect.any(Number) },
    });
    expect(app().messagesTo(PHONE)).toHaveLength(1);
  });

  it('sends a new code after the cooldown, and that code verifies', async () => {
    await burnCode();
    app().tick(COOLDOWN_MS);

    const resend = await app().post('otp_generate', { uid: PHONE });
    const fresh = app().codeFor(PHONE);
    const verified = await app().post('verify_otp', { email: PHONE, otp_code: fresh });

    expect(resend.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
    expect(app().messagesTo(PHONE)).toHaveLength(2);
    expect(fresh).toMatch(/^\d{6}$/);
    expect(verified.body).toMatchObject({ success: true, data: { valid: true, proof: expect.any(String) } });
  });
});

describe('codes go by SMS only to mobile numbers', () => {
  const app = useSecurityApp();
  const LANDLINE = '+390212345678';
  const PREMIUM = '+39899123456';

  it('answers phone_not_mobile to otp_generate for a Milan landline and sends nothing', async () => {
    const sent = await app().post('otp_generate', { uid: LANDLINE });

    expect(sent.body).toMatchObject({ success: false, data: { reason: 'phone_not_mobile' } });
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });

  it('answers phone_not_mobile to otp_generate for a premium-rate number and sends nothing', async () => {
    const sent = await app().post('otp_generate', { uid: PREMIUM });

    expect(sent.body).toMatchObject({ success: false, data: { reason: 'phone_not_mobile' } });
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });

  it('answers phone_not_mobile to otp_generate naming a landline as the phone beside another key, and sends nothing', async () => {
    const sent = await app().post('otp_generate', { uid: 'someone@example.com', phone: LANDLINE });

    expect(sent.body).toMatchObject({ success: false, data: { reason: 'phone_not_mobile' } });
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });

  it('answers phone_not_mobile to FeLogin with a landline and sends nothing', async () => {
    const login = await app().post('FeLogin', { identifier: LANDLINE });

    expect(login.body).toMatchObject({ success: false, data: { reason: 'phone_not_mobile' } });
    expect(login.body.data).not.toHaveProperty('next_step');
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });
});

describe('phone lookups are limited', () => {
  const PROBES = ['+393335550101', '+393335550102', '+393335550103', '+393335550104', '+393335550105'];
  let app: SecurityApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Giulia (no phone) logs in by email code: the 61 proof FeAddPhone takes. */
  async function giuliaAt61(running: SecurityApp): Promise<string> {
    await running.post('FeLogin', { identifier: GIULIA.email });
    const at61 = await running.post('FeVerifyOtp', {
      flow: 'email',
      email: GIULIA.email,
      otp_code: running.codeFor(GIULIA.email),
    });
    expect(at61.body.data).toMatchObject({ next_step: 61, proof: expect.any(String) });
    return at61.body.data.proof as string;
  }

  const addPhone = (running: SecurityApp, phone: string, proof: string) =>
    running.post('FeAddPhone', { flow: 'email_add_phone', phone, uid: GIULIA.uid, email: GIULIA.email, proof });

  it('refuses FeAddPhone probes past lookups_per_account_per_hour with 429, the taken phone included', async () => {
    app = await startSecurityApp({ rate_limits: { lookups_per_account_per_hour: 3 } });
    const proof = await giuliaAt61(app);
    const allowed = [
      await addPhone(app, PROBES[0]!, proof),
      await addPhone(app, MARIO.phone, proof),
      await addPhone(app, PROBES[1]!, proof),
    ];

    const probe = await addPhone(app, PROBES[2]!, proof);
    const taken = await addPhone(app, MARIO.phone, proof);

    expect(allowed.map((res) => res.body.data.next_step ?? res.body.data.reason)).toEqual([62, 'phone_taken', 62]);
    for (const refused of [probe, taken]) {
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        success: false,
        data: { reason: 'rate_limited', limit: 'lookups_per_account_per_hour' },
      });
    }
    expect(app.messagesTo(PROBES[2]!)).toHaveLength(0);
  });

  it('refuses FeAddPhone probes past lookups_per_ip_per_minute with 429', async () => {
    app = await startSecurityApp({ rate_limits: { lookups_per_ip_per_minute: 3 } });
    const proof = await giuliaAt61(app);
    for (const phone of PROBES.slice(0, 3))
      expect((await addPhone(app, phone, proof)).body.data).toMatchObject({ next_step: 62 });

    const probe = await addPhone(app, PROBES[3]!, proof);

    expect(probe.status).toBe(429);
    expect(probe.body).toMatchObject({
      success: false,
      data: { reason: 'rate_limited', limit: 'lookups_per_ip_per_minute' },
    });
    expect(app.messagesTo(PROBES[3]!)).toHaveLength(0);
  });

  /** Giulia by the primitives: her email verified, then get_user_email links her uid. */
  async function giuliaProof(running: SecurityApp): Promise<string> {
    await running.post('otp_generate', { uid: GIULIA.email });
    const verified = await running.post('verify_otp', { email: GIULIA.email, otp_code: running.codeFor(GIULIA.email) });
    const profile = await running.post('get_user_email', { email: GIULIA.email, proof: verified.body.data.proof });
    expect(profile.body.meta).toMatchObject({ exists: true, uid: GIULIA.uid });
    return profile.body.data.proof as string;
  }

  /** A proof for Giulia's uid and a phone whose code she verified. */
  async function withVerifiedPhone(running: SecurityApp, accountProof: string, phone: string): Promise<string> {
    await running.post('otp_generate', { uid: phone });
    const verified = await running.post('verify_otp', {
      email: phone,
      otp_code: running.codeFor(phone),
      proof: accountProof,
    });
    return verified.body.data.proof as string;
  }

  it.each(['lookups_per_account_per_hour', 'lookups_per_ip_per_minute'] as const)(
    'refuses update_profile with otp_phone past %s with 429 and saves nothing',
    async (limit) => {
      app = await startSecurityApp({ rate_limits: { [limit]: 2 } });
      const accountProof = await giuliaProof(app);
      for (const phone of PROBES.slice(0, 2)) {
        const proof = await withVerifiedPhone(app, accountProof, phone);
        expect((await app.post('update_profile', { uid: GIULIA.uid, otp_phone: phone, proof })).body).toMatchObject({
          success: true,
        });
      }
      const proof = await withVerifiedPhone(app, accountProof, PROBES[2]!);

      const third = await app.post('update_profile', { uid: GIULIA.uid, otp_phone: PROBES[2], proof });

      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ success: false, data: { reason: 'rate_limited', limit } });
      // Read back with the account's own proof (get_user is no lookup, so no limit stands in the way).
      const profile = await app.post('get_user', { uid: GIULIA.uid, proof: accountProof });
      expect(profile.body.data.otp_phone).toBe(PROBES[1]!.replace('+', ''));
    },
  );

  it('answers update_profile alike for a taken and a free phone the proof does not vouch for: proof_required, and no lookup counted', async () => {
    app = await startSecurityApp({ rate_limits: { lookups_per_account_per_hour: 1 } });
    const accountProof = await giuliaProof(app);

    const taken = await app.post('update_profile', { uid: GIULIA.uid, otp_phone: MARIO.phone, proof: accountProof });
    const free = await app.post('update_profile', { uid: GIULIA.uid, otp_phone: PROBES[4], proof: accountProof });

    expect(taken.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(free.status).toBe(taken.status);
    expect(free.body).toEqual(taken.body);
    // The one lookup of the hour is still there: the refused probes looked nothing up.
    const proof = await withVerifiedPhone(app, accountProof, PROBES[4]!);
    expect((await app.post('update_profile', { uid: GIULIA.uid, otp_phone: PROBES[4], proof })).body).toMatchObject({
      success: true,
    });
  });
});

describe('password guessing is limited and reveals no account', () => {
  const app = useSecurityApp();

  it('refuses the sixth password login for one email within the window with 429 password_logins_per_email', async () => {
    const wrong = [];
    for (let i = 0; i < 5; i++) wrong.push(await app().post('login', { email: MARIO.email, password: `guess-${i}` }));

    const sixth = await app().post('login', { email: MARIO.email, password: 'sandbox-password' });

    for (const refused of wrong)
      expect(refused.body).toMatchObject({ success: false, data: { reason: 'invalid_credentials' } });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({
      success: false,
      data: { reason: 'rate_limited', limit: 'password_logins_per_email' },
    });
    expect(sixth.body.data).not.toHaveProperty('access_token');
  });

  it('answers an unknown email and a wrong password with identical bodies', async () => {
    const unknown = await app().post('login', { email: 'nobody.here@example.com', password: 'guess' });

    const wrongPassword = await app().post('login', { email: MARIO.email, password: 'guess' });

    expect(wrongPassword.body).toMatchObject({ success: false, data: { reason: 'invalid_credentials' } });
    expect(unknown.status).toBe(wrongPassword.status);
    expect(unknown.body).toEqual(wrongPassword.body);
  });
});

describe('actions take only honest JSON bodies', () => {
  const app = useSecurityApp();

  it('answers otp_generate sent as text/plain with 415 and sends nothing', async () => {
    const body = Buffer.from(JSON.stringify({ uid: MARIO.phone }));

    const res = await app().rawPost('/?action=otp_generate', { 'content-type': 'text/plain' }, body);

    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'unsupported_media_type' } });
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });

  it('answers otp_generate sent as a form with 415 and sends nothing', async () => {
    const body = Buffer.from(`uid=${encodeURIComponent(MARIO.phone)}`);

    const res = await app().rawPost(
      '/?action=otp_generate',
      { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    );

    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'unsupported_media_type' } });
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });

  it('answers a body labelled Content-Encoding gzip that is plain bytes with 400 and the envelope, and sends nothing', async () => {
    const plain = Buffer.from(JSON.stringify({ uid: MARIO.phone }));

    const res = await app().rawPost(
      '/?action=otp_generate',
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      plain,
    );

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: expect.any(String),
      data: expect.objectContaining({ reason: 'malformed_json' }),
    });
    expect(app().sandbox.outbox.list()).toHaveLength(0);
  });

  it('still accepts a JSON body that really is gzip-encoded', async () => {
    const gzipped = gzipSync(Buffer.from(JSON.stringify({ uid: MARIO.phone })));

    const res = await app().rawPost(
      '/?action=otp_generate',
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      gzipped,
    );

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
    expect(app().messagesTo(MARIO.phone)).toHaveLength(1);
  });
});
