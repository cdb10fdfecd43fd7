import fc from 'fast-check';
import { canonicalMailbox, MAILBOX_PATTERN, recipientKey } from '../../src/core/address';
import { PHONE_PATTERN } from '../../src/core/phone-pattern';
import { toE164 } from '../../src/domain/phone';

/*
 * The patterns the OpenAPI document states for mailboxes and phones against the parsers they
 * describe: every text a pattern admits is one the service reads (drawn by fast-check, without
 * the lookahead it cannot draw, then held to the whole pattern).
 */

const drawn = (pattern: string) => {
  const whole = new RegExp(pattern);
  return fc.stringMatching(new RegExp(pattern.replace(/\(\?=[^)]*\)/g, ''))).filter((text) => whole.test(text));
};

describe('the document patterns', () => {
  it('admits only mailboxes canonicalMailbox reads', () => {
    fc.assert(
      fc.property(
        drawn(MAILBOX_PATTERN).filter((text) => text.length <= 254),
        (text) => canonicalMailbox(text) !== null,
      ),
      { numRuns: 500, seed: 47 },
    );
  });

  it('admits only phones toE164 reads, in E.164 and national in IT', () => {
    fc.assert(
      fc.property(drawn(PHONE_PATTERN), (text) => toE164(text, 'IT') !== null),
      { numRuns: 500, seed: 47 },
    );
    expect(new RegExp(PHONE_PATTERN).test('+393331234567')).toBe(true);
    expect(new RegExp(PHONE_PATTERN).test('3331234567')).toBe(true);
    expect(new RegExp(PHONE_PATTERN).test('+39 333')).toBe(false);
  });

  it('refuses what the parsers refuse: a one-label domain, a list, a local part over 64', () => {
    const mailbox = new RegExp(MAILBOX_PATTERN);
    for (const text of ['0@com', 'a@b.com, c@d.com', `${'a'.repeat(65)}@example.com`, 'a..b@example.com'])
      expect([text, mailbox.test(text), canonicalMailbox(text)]).toEqual([text, false, null]);
    expect(recipientKey().safeParse('mario.rossi@example.com').success).toBe(true);
  });
});
