import fc from 'fast-check';
import { canonicalMailbox } from '../../src/core/address';
import { ATTACKER_PHONE, COOLDOWN_MS, MARIO, proofClaims, useSecurityApp, type SecurityApp } from './support';

/*
 * One canonical address per key, replayed from outside: an address list, a display name, a
 * comment or another spelling of a mailbox is refused at the edge or is the same key, so a
 * code goes to one mailbox and its proof names that mailbox, and a cooldown holds across
 * every spelling.
 */

const ATTACKER = 'attacker@evil.example';
const LISTS = [
  `${ATTACKER} ${MARIO.email}`,
  `+${ATTACKER} ${MARIO.phone}`,
  `${ATTACKER},${MARIO.email}`,
  `${ATTACKER}; ${MARIO.email}`,
  `${ATTACKER}\t${MARIO.email}`,
];

/** Everything the sandbox delivered, by channel and recipient. */
const delivered = (app: SecurityApp) =>
  app.sandbox.outbox.list().filter((m) => m.channel === 'sms' || m.channel === 'email');

describe('an address list as a key (the takeover of the second security round)', () => {
  const app = useSecurityApp();

  it.each(LISTS)('refuses otp_generate with uid %j, sending nothing', async (uid) => {
    const sent = await app().post('otp_generate', { uid });

    expect(sent.body).toMatchObject({ success: false, data: { reason: 'invalid_request', issues: [{ path: 'uid' }] } });
    expect(delivered(app())).toHaveLength(0);
  });

  it.each(LISTS)('answers no proof to verify_otp with email %j, so no token is issued for the victim', async (key) => {
    const verified = await app().post('verify_otp', { email: key, otp_code: '000000' });
    expect(verified.body).toMatchObject({ success: false, data: { reason: 'invalid_request' } });

    const token = await app().post('access_token', { uid: MARIO.uid });
    expect(token.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
    expect(token.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a list in notify_email and in FeLogin, sending nothing', async () => {
    const notify = await app().post('otp_generate', {
      uid: ATTACKER_PHONE,
      notify_email: `${ATTACKER}, ${MARIO.email}`,
    });
    const login = await app().post('FeLogin', { identifier: `${ATTACKER} ${MARIO.email}` });

    expect(notify.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'notify_email' }] },
    });
    expect(login.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'identifier' }] },
    });
    expect(delivered(app())).toHaveLength(0);
  });

  it('refuses get_user_email and register for an email written as a list', async () => {
    for (const action of ['get_user_email', 'register']) {
      const res = await app().post(action, { email: `${ATTACKER} ${MARIO.email}` });
      expect(res.body).toMatchObject({
        success: false,
        data: { reason: 'invalid_request', issues: [{ path: 'email' }] },
      });
    }
    expect(delivered(app())).toHaveLength(0);
  });
});

describe('one mailbox, many spellings: one key, one cooldown', () => {
  const app = useSecurityApp();
  const VICTIM = 'v@x.example';

  it('refuses every spelling that wraps the mailbox, and counts a case variant as the same mailbox', async () => {
    const first = await app().post('otp_generate', { uid: VICTIM });
    expect(first.body).toMatchObject({ success: true, data: { notified: { email: true } } });

    for (const spelling of [`<${VICTIM}>`, `Name <${VICTIM}>`, `${VICTIM},`, `${VICTIM};`, `(c)${VICTIM}`]) {
      const res = await app().post('otp_generate', { uid: spelling });
      expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_request' } });
    }
    const shouted = await app().post('otp_generate', { uid: VICTIM.toUpperCase() });
    expect(shouted.body).toMatchObject({ success: false, data: { reason: 'already_sent' } });
    expect(delivered(app())).toHaveLength(1);
  });
});

/* ---- property: hostile spellings ---- */

const mailboxes = fc.constantFrom(MARIO.email, ATTACKER, 'v@x.example', 'Mixed.Case@Example.ORG');
const phones = fc.constantFrom(MARIO.phone, ATTACKER_PHONE);
const wrap = fc.constantFrom(
  (a: string) => a,
  (a: string) => a.toUpperCase(),
  (a: string) => ` ${a} `,
  (a: string) => `<${a}>`,
  (a: string) => `Name <${a}>`,
  (a: string) => `"Name" <${a}>`,
  (a: string) => `(comment)${a}`,
  (a: string) => `${a} (comment)`,
  (a: string) => `"${a}"`,
  (a: string) => `+${a}`,
  (a: string) => `group: ${a};`,
  (a: string) => a.replace('a', '\u0430'), // Cyrillic a
  (a: string) => a.replace('@', '\uff20'), // fullwidth at
);
const joiners = fc.constantFrom(' ', ',', ';', ', ', '\n', '');
const spellings = fc.oneof(
  fc.tuple(wrap, mailboxes).map(([w, a]) => w(a)),
  fc
    .tuple(wrap, mailboxes, joiners, wrap, fc.oneof(mailboxes, phones))
    .map(([w1, a, j, w2, b]) => `${w1(a)}${j}${w2(b)}`),
  fc.tuple(phones, joiners, mailboxes).map(([p, j, a]) => `${p}${j}${a}`),
  fc
    .tuple(mailboxes, fc.constantFrom('', '.', '%'))
    .map(([a, s]) => `${a.split('@')[0]}${s}${MARIO.phone}@${a.split('@')[1]}`),
);

describe('hostile spellings of an address (property)', () => {
  const app = useSecurityApp({ rate_limits: { enabled: false } });

  it('either refuses the key, or mails exactly one mailbox, its canonical spelling, and proves exactly that one', async () => {
    await fc.assert(
      fc.asyncProperty(spellings, async (uid) => {
        app().tick(COOLDOWN_MS);
        const before = delivered(app()).length;
        const sent = await app().post('otp_generate', { uid });
        const reached = delivered(app()).slice(0, delivered(app()).length - before);
        if (!sent.body.success) {
          expect(sent.body.data.reason).toBe('invalid_request');
          expect(reached).toHaveLength(0);
          return;
        }
        const canonical = canonicalMailbox(uid);
        expect(canonical).not.toBeNull();
        // The sandbox's SMTP server (smtp-server) writes an IDNA domain of RCPT TO back in Unicode.
        expect(reached.map((m) => canonicalMailbox(m.to))).toEqual([canonical]);
        const verified = await app().post('verify_otp', { email: uid, otp_code: reached[0]!.code });
        expect(verified.body).toMatchObject({ success: true, data: { valid: true } });
        const claims = proofClaims(verified.body.data.proof);
        expect(claims.email).toBe(canonical);
        expect(claims).not.toHaveProperty('phone');
      }),
      { numRuns: 80 },
    );
  });

  it('holds one cooldown for a mailbox across all of its accepted spellings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...['v@x.example', 'V@X.EXAMPLE', ' v@X.example', 'v@x.EXAMPLE ']),
        async (uid) => {
          const res = await app().post('otp_generate', { uid });
          if (res.body.success) expect(delivered(app()).filter((m) => m.to === 'v@x.example')).toHaveLength(1);
          else expect(res.body.data.reason).toBe('already_sent');
        },
      ),
      { numRuns: 20 },
    );
    expect(delivered(app()).filter((m) => m.to === 'v@x.example')).toHaveLength(1);
  });
});
