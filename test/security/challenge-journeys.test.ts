import { solvePow } from '../support/challenge';
import { GIULIA, MARIO, useSecurityApp } from './support';

/*
 * The bot challenge on the journeys over the sandbox: in `adaptive` mode an honest journey from
 * one client is never asked, whatever it sends; in `always` mode each send asks once, the
 * journey repeats the request with the solution and goes on to step 90; password logins are
 * asked after wrong passwords; subscriptions like sends.
 */

describe('honest journeys in adaptive mode', () => {
  const app = useSecurityApp({ challenge: { mode: 'adaptive', pow_difficulty: 2000 } });

  it('takes Giulia through 61, 62 and 90 (an email code and an SMS code) without a challenge', async () => {
    const phone = '+393335550101';
    const at33 = await app().post('FeLogin', { identifier: GIULIA.email });
    const at61 = await app().post('FeVerifyOtp', {
      flow: 'email',
      email: GIULIA.email,
      otp_code: app().codeFor(GIULIA.email),
    });
    const at62 = await app().post('FeAddPhone', {
      flow: 'email_add_phone',
      phone,
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
    expect([at33, at61, at62, at90].map((r) => r.body.data.next_step)).toEqual([33, 61, 62, 90]);
  });

  it('registers by email with a code and a phone without a challenge', async () => {
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
      consents: { terms_conditions: true },
      register_proof: at37.body.data.register_proof,
    });
    const at62 = await app().post('FeAddPhone', {
      flow: 'email_register_phone',
      phone,
      uid: registered.body.data.uid,
      email,
      proof: registered.body.data.proof,
    });
    const done = await app().post('FeVerifyOtp', {
      flow: 'email_register_phone',
      phone,
      uid: registered.body.data.uid,
      otp_code: app().codeFor(phone),
      pending_proof: at62.body.data.pending_proof,
    });
    expect([at23, at37, registered, at62, done].map((r) => r.body.data.next_step)).toEqual([23, 37, 90, 62, 90]);
  });

  it('asks for a challenge before a password login after three wrong passwords for the email', async () => {
    for (let i = 0; i < 3; i += 1)
      expect((await app().post('login', { email: MARIO.email, password: `wrong-${i}` })).body.data.reason).toBe(
        'invalid_credentials',
      );
    const asked = (await app().post('login', { email: MARIO.email, password: 'wrong-again' })).body;
    expect(asked.data.reason).toBe('challenge_required');
    // Solved, the next guess is heard (and refused as any wrong password is).
    const heard = (
      await app().post('login', {
        email: MARIO.email,
        password: 'wrong-again',
        challenge: await solvePow(asked.data.challenge),
      })
    ).body;
    expect(heard.data.reason).toBe('invalid_credentials');
  });
});

describe('journeys in always mode', () => {
  const app = useSecurityApp({ challenge: { mode: 'always', pow_difficulty: 2000 } });

  it('logs Mario in by phone: FeLogin is challenged, repeated with the solution it answers 14, then 90', async () => {
    const asked = (await app().post('FeLogin', { identifier: MARIO.phone })).body;
    expect(asked.data.reason).toBe('challenge_required');
    expect(app().messagesTo(MARIO.phone)).toHaveLength(0);
    const at14 = (
      await app().post('FeLogin', { identifier: MARIO.phone, challenge: await solvePow(asked.data.challenge) })
    ).body;
    expect(at14.data.next_step).toBe(14);
    const at90 = (
      await app().post('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: app().codeFor(MARIO.phone) })
    ).body;
    expect(at90.data).toMatchObject({ next_step: 90, uid: MARIO.uid });
  });

  it('asks newsletter_subscribe to prove work before it mails anyone', async () => {
    const asked = (
      await app().post('newsletter_subscribe', {
        email: 'lettore@example.com',
        selections: [{ feed: 'feed_a', mlid: '101' }],
      })
    ).body;
    expect(asked.data.reason).toBe('challenge_required');
    const done = (
      await app().post('newsletter_subscribe', {
        email: 'lettore@example.com',
        selections: [{ feed: 'feed_a', mlid: '101' }],
        challenge: await solvePow(asked.data.challenge),
      })
    ).body;
    expect(done.success).toBe(true);
  });

  it('never asks FeVerifyOtp, which takes no solution: its SMS at 65 is authorised by the email code just verified', async () => {
    const registrant = '+393337770021';
    const email = 'victim.new@example.com';
    const solved = async (action: string, body: Record<string, unknown>) => {
      const asked = (await app().post(action, body)).body;
      expect(asked.data.reason).toBe('challenge_required');
      return (await app().post(action, { ...body, challenge: await solvePow(asked.data.challenge) })).body;
    };
    // A phone registers someone else's email and attaches the phone (security.md, "An email registered on a phone proof alone").
    await solved('otp_generate', { uid: registrant });
    const verified = (await app().post('verify_otp', { email: registrant, otp_code: app().codeFor(registrant) })).body;
    const registered = (
      await app().post('register', { email, phone: registrant, proof: verified.data.proof, send_otp: false })
    ).body;
    await app().post('update_profile', {
      uid: registered.data.uid,
      otp_phone: registrant,
      proof: registered.data.proof,
    });
    app().tick(61_000);
    // The email's owner logs in by email code: FeLogin is asked, FeVerifyOtp's SMS to the phone on file is not.
    await solved('FeLogin', { identifier: email });
    const at65 = (await app().post('FeVerifyOtp', { flow: 'email', email, otp_code: app().codeFor(email) })).body;
    expect(at65.data).toMatchObject({ next_step: 65, pending_proof: expect.any(String) });
  });

  it('asks register before the account is made when it is to send a code, and keeps the proof for the repeated request', async () => {
    const email = 'nuovo@example.com';
    const post = async (action: string, body: Record<string, unknown>) => {
      const asked = (await app().post(action, body)).body;
      expect(asked.data.reason).toBe('challenge_required');
      return (await app().post(action, { ...body, challenge: await solvePow(asked.data.challenge) })).body;
    };
    await post('otp_generate', { uid: email });
    const verified = (await app().post('verify_otp', { email, otp_code: app().codeFor(email) })).body;
    app().tick(61_000);
    const registered = await post('register', { email, proof: verified.data.proof });
    expect(registered.data).toMatchObject({ uid: expect.any(String), otp_sent: true });
    expect(app().messagesTo(email)).toHaveLength(2);
  });
});
