import { GIULIA, MARIO, useSecurityApp } from './support';

/*
 * Actions that write or reveal, metered, replayed from outside: one phone proof asks the
 * provider about one email (not any number of them), and newsletter subscriptions, which need no
 * proof, are limited per client and per email.
 */

describe('register is not an oracle of registered emails', () => {
  const app = useSecurityApp();
  const PHONE = '+393337770021';

  async function phoneProof(): Promise<string> {
    await app().post('otp_generate', { uid: PHONE });
    const verified = await app().post('verify_otp', { email: PHONE, otp_code: app().codeFor(PHONE) });
    return verified.body.data.proof as string;
  }

  it('answers the catalogue refusal for a registered email, never the provider text, and spends the proof on it', async () => {
    const proof = await phoneProof();

    const refused = await app().post('register', { email: MARIO.email, phone: PHONE, proof });
    expect(refused.body).toEqual({
      success: false,
      error: 'Registrazione non riuscita: se hai già un account con questa email, accedi.',
      data: { reason: 'registration_refused' },
    });
    expect(JSON.stringify(refused.body)).not.toMatch(/already registered|409/i);

    // The same proof cannot ask about a second email: one code, one question.
    const probe = await app().post('register', { email: GIULIA.email, phone: PHONE, proof });
    expect(probe.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', why: 'spent' } });
  });

  it('limits registrations per client, whatever the proofs', async () => {
    const answers = [];
    for (let i = 0; i < 11; i++)
      answers.push(await app().post('register', { email: `new${i}@example.com`, proof: 'not-a-proof' }));
    // Refused proofs never reach the limit: it counts what is asked of the provider.
    expect(answers.every((a) => a.body.data.reason !== 'rate_limited')).toBe(true);
  });
});

describe('register is limited per client', () => {
  const app = useSecurityApp({ rate_limits: { registrations_per_ip_per_hour: 2 } });

  it('refuses the third registration asked of the provider within the hour with rate_limited', async () => {
    const reasons: string[] = [];
    for (const [i, phone] of ['+393337770031', '+393337770032', '+393337770033'].entries()) {
      await app().post('otp_generate', { uid: phone });
      const { proof } = (await app().post('verify_otp', { email: phone, otp_code: app().codeFor(phone) })).body.data;
      const res = await app().post('register', { email: `limited${i}@example.com`, phone, proof });
      reasons.push(res.body.success ? 'ok' : res.body.data.reason);
    }
    expect(reasons).toEqual(['ok', 'ok', 'rate_limited']);
    expect((await app().post('get_user_email', { email: 'limited2@example.com' })).body.meta).toMatchObject({
      exists: false,
    });
  });
});

describe('newsletter_subscribe is metered', () => {
  const app = useSecurityApp();

  it('refuses a client subscribing strangers in bulk after 20 per hour, calling the mailing list no more', async () => {
    const answers = [];
    for (let i = 0; i < 25; i++)
      answers.push(
        await app().post('newsletter_subscribe', {
          email: `stranger${i}@example.com`,
          selections: [{ feed: 'feed_a', mlid: '101' }],
        }),
      );
    const limited = answers.filter((a) => a.body.data?.reason === 'rate_limited');
    expect(limited).toHaveLength(5);
    expect(limited[0]!.body.data).toMatchObject({
      limit: 'subscriptions_per_ip_per_hour',
      retry_after: expect.any(Number),
    });
    expect(app().sandbox.outbox.list('newsletter')).toHaveLength(20);
  });
});

describe('newsletter_subscribe is metered per email', () => {
  const app = useSecurityApp();

  it('refuses the sixth subscription of one email in a day, however it is spelled', async () => {
    const spellings = [
      'victim@example.com',
      'VICTIM@example.com',
      'Victim@Example.com',
      ' victim@example.com',
      'victim@EXAMPLE.COM',
      'victim@example.com',
    ];
    const answers = [];
    for (const email of spellings)
      answers.push(await app().post('newsletter_subscribe', { email, selections: [{ feed: 'feed_a', mlid: '101' }] }));
    expect(answers.map((a) => a.body.data?.reason === 'rate_limited')).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
    expect(answers[5]!.body.data).toMatchObject({ limit: 'subscriptions_per_email_per_day' });
    expect(app().sandbox.outbox.list('newsletter')).toHaveLength(5);
  });
});
