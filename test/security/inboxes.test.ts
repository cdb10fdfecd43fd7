import { redisReady } from '../../src/core/redis';
import { startRedisServer, type RedisServer } from '../support/redis-server';
import { COOLDOWN_MS, startSecurityApp, useSecurityApp, type SecurityApp } from './support';

/*
 * One inbox, many spellings (issue 33, finding 2), replayed from outside: `victim+1@`,
 * `victim+news@` and Gmail's dots and googlemail.com reach the inbox of `victim@` and `bob@`,
 * so they share its cooldown and its caps. The code still goes to the spelling typed.
 */

const SUBADDRESSES = ['victim@example.org', 'victim+1@example.org', 'victim+news@example.org', 'Victim+x@Example.org'];
const GMAILS = ['bob@gmail.com', 'b.ob@gmail.com', 'bo.b@gmail.com', 'bob+a@googlemail.com', 'B.O.B@GoogleMail.com'];

/** The code mails the sandbox delivered, whoever they were addressed to. */
const mails = (app: SecurityApp) => app.sandbox.outbox.list().filter((m) => m.channel === 'email');

/** otp_generate for each spelling in turn: the first answer is a send, every other the cooldown's refusal, and one mail goes out. */
async function expectOneMail(app: SecurityApp, spellings: string[]): Promise<void> {
  const [first, ...others] = spellings;
  const sent = await app.post('otp_generate', { uid: first });
  expect(sent.body).toMatchObject({ success: true, data: { notified: { email: true } } });

  for (const uid of others) {
    const res = await app.post('otp_generate', { uid });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'already_sent', blocked: true, retry_after: expect.any(Number) },
    });
    expect(res.body.error).toMatch(/^OTP già inviato\. Riprova tra \d+ secondi\.$/);
    expect(res.body.data.retry_after).toBeGreaterThan(0);
    expect(res.body.data.retry_after).toBeLessThanOrEqual(60);
  }
  expect(mails(app)).toHaveLength(1);
  expect(mails(app)[0]!.to.toLowerCase()).toBe(first!.toLowerCase());
}

function inboxSuite(app: () => SecurityApp) {
  it('sends one code per cooldown to an inbox spelled with +tags', async () => {
    await expectOneMail(app(), SUBADDRESSES);
  });

  it('sends one code per cooldown to a Gmail inbox spelled with dots or googlemail.com, while bob@ itself is in cooldown', async () => {
    await expectOneMail(app(), GMAILS);
  });

  it('sends one code per cooldown whichever spelling came first, and mails the spelling typed', async () => {
    await expectOneMail(app(), ['victim+news@example.org', 'victim@example.org', 'victim+1@example.org']);
  });
}

describe('one inbox, one cooldown (memory store)', () => {
  const app = useSecurityApp();
  inboxSuite(app);

  it('mails the next spelling once the cooldown has passed, and proves the spelling it mailed', async () => {
    await app().post('otp_generate', { uid: 'victim@example.org' }).expect(200);
    app().tick(COOLDOWN_MS);

    const next = await app().post('otp_generate', { uid: 'victim+1@example.org' });
    expect(next.body).toMatchObject({ success: true });
    const verified = await app().post('verify_otp', {
      email: 'victim+1@example.org',
      otp_code: app().codeFor('victim+1@example.org'),
    });
    expect(verified.body).toMatchObject({ success: true, data: { valid: true } });
    expect(mails(app()).map((m) => m.to)).toEqual(
      expect.arrayContaining(['victim@example.org', 'victim+1@example.org']),
    );
  });
});

describe('one inbox, one cooldown (Redis store)', () => {
  let server: RedisServer;
  let current: SecurityApp | undefined;
  let run = 0;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    // A prefix per test: each starts with no cooldown and no counter, on one server.
    current = await startSecurityApp({
      otp: { store: 'redis' },
      redis: { url: server.url, key_prefix: `inboxes${++run}:` },
    });
    await redisReady(current.deps.redis!, 15_000);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  inboxSuite(() => current!);
});

describe('one inbox, one per-recipient cap', () => {
  const app = useSecurityApp();

  it('refuses the sixth code to one inbox in its window, each spelled anew after the cooldown', async () => {
    const spellings = [
      'victim@example.org',
      'victim+1@example.org',
      'victim+2@example.org',
      'VICTIM+3@example.org',
      'victim+4@example.org',
      'victim+5@example.org',
    ];
    const answers = [];
    for (const uid of spellings) {
      answers.push(await app().post('otp_generate', { uid }));
      app().tick(COOLDOWN_MS);
    }
    expect(answers.map((a) => a.body.success)).toEqual([true, true, true, true, true, false]);
    expect(answers[5]!.body.data).toMatchObject({ reason: 'rate_limited', limit: 'sends_per_recipient' });
    expect(mails(app())).toHaveLength(5);
  });
});

describe('one inbox, one newsletter budget', () => {
  const app = useSecurityApp();

  it('refuses the sixth subscription of one inbox in a day, whatever +tag or Gmail spelling it wears', async () => {
    const spellings = [
      'bob@gmail.com',
      'b.ob@gmail.com',
      'bob+news@gmail.com',
      'bo.b+1@googlemail.com',
      'BOB@googlemail.com',
      'b.o.b+x@gmail.com',
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

describe('one inbox, one password budget', () => {
  const app = useSecurityApp();

  it('refuses the sixth password guess for one inbox in its window, whatever +tag it wears', async () => {
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push(await app().post('login', { email: `victim+${i}@example.org`, password: `guess-${i}` }));
    expect(answers.map((a) => a.body.data?.reason === 'rate_limited')).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
    expect(answers[5]!.body.data).toMatchObject({ limit: 'password_logins_per_email' });
  });
});
