import fc from 'fast-check';
import { budgetOf, canonicalMailbox, inboxOf } from '../../src/core/address';

/*
 * The inbox every per-recipient count keys on: every spelling of one inbox (case, any `+tag`,
 * and for Gmail any dots and googlemail.com) is one budget key, and two inboxes never share one.
 */

const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const word = (min: number, max: number) => fc.array(fc.constantFrom(...LETTERS), { minLength: min, maxLength: max }).map((chars) => chars.join(''));
/** A local part with no tag: words joined by `.`, `-` or `_` (dots only count where the provider heeds them). */
const localPart = fc.tuple(word(1, 8), fc.array(fc.tuple(fc.constantFrom('.', '-', '_'), word(1, 5)), { maxLength: 2 })).map(([head, rest]) => head + rest.map(([sep, w]) => sep + w).join(''));
const OTHER_DOMAINS = ['example.org', 'x.example', 'outlook.com', 'mail.co.uk', 'gmail.com.example'];
const GMAIL = ['gmail.com', 'googlemail.com'];

interface Mailbox {
  local: string;
  domain: string;
}
/** A mailbox as its owner knows it: a Gmail one without dots (Gmail has none to tell apart). */
const mailboxes = fc.oneof(
  fc.record({ local: localPart, domain: fc.constantFrom(...OTHER_DOMAINS) }),
  fc.record({ local: localPart.map((l) => l.replaceAll('.', '')), domain: fc.constant('gmail.com') }),
);
const expectedInbox = ({ local, domain }: Mailbox) => `${local}@${domain}`;

/** A `+tag`, or none: any atext, and dots only where a dot-atom allows them. */
const tag = fc.option(
  fc.tuple(fc.array(fc.constantFrom(...LETTERS, '-', '_', '+'), { maxLength: 6 }), fc.option(word(1, 4), { nil: '' })).map(([chars, more]) => `+${chars.join('')}${more && `.${more}`}`),
  { nil: '' },
);
const anyCase = (text: string) => fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
/** Dots between any characters of a Gmail local part (never first, last or doubled: a dot-atom). */
const dotted = (local: string) =>
  fc.array(fc.boolean(), { minLength: local.length, maxLength: local.length }).map((dots) => [...local].map((c, i) => (dots[i] && i < local.length - 1 ? `${c}.` : c)).join(''));

/** Any spelling that reaches `mailbox`'s inbox. */
const spellingOf = (mailbox: Mailbox) => {
  const gmail = mailbox.domain === 'gmail.com';
  return fc
    .tuple(gmail ? dotted(mailbox.local) : fc.constant(mailbox.local), tag, gmail ? fc.constantFrom(...GMAIL) : fc.constant(mailbox.domain))
    .chain(([local, t, domain]) => anyCase(`${local}${t}@${domain}`));
};

/** The canonical value the edge hands on, as every counter receives it. */
const canonical = (spelling: string) => {
  const address = canonicalMailbox(spelling);
  if (address === null) throw new Error(`not a mailbox: ${spelling}`);
  return address;
};

describe('inboxOf', () => {
  it('maps the issue spellings to one inbox each', () => {
    expect(['victim@example.org', 'victim+1@example.org', 'victim+news@example.org', 'Victim+X@Example.org'].map((a) => inboxOf(canonical(a)))).toEqual(Array(4).fill('victim@example.org'));
    expect(['bob@gmail.com', 'b.ob@gmail.com', 'bo.b@gmail.com', 'bob+a@googlemail.com', 'B.O.B+x.y@GoogleMail.com'].map((a) => inboxOf(canonical(a)))).toEqual(Array(5).fill('bob@gmail.com'));
  });

  it('keeps dots where the provider is not known to ignore them, and a local part that is all tag', () => {
    expect(inboxOf(canonical('a.b@example.org'))).toBe('a.b@example.org');
    expect(inboxOf(canonical('a.b+c@example.org'))).toBe('a.b@example.org');
    expect(inboxOf(canonical('+x@example.org'))).toBe('+x@example.org');
  });

  it('maps every spelling of one mailbox to one budget key (property)', () => {
    fc.assert(
      fc.property(
        mailboxes.chain((mailbox) => fc.tuple(fc.constant(mailbox), fc.array(spellingOf(mailbox), { minLength: 1, maxLength: 6 }))),
        ([mailbox, spellings]) => {
          for (const spelling of spellings) expect(inboxOf(canonical(spelling))).toBe(expectedInbox(mailbox));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never gives two different mailboxes one budget key (property)', () => {
    const distinct = fc.uniqueArray(mailboxes, { minLength: 2, maxLength: 8, selector: expectedInbox });
    fc.assert(
      fc.property(
        distinct.chain((list) => fc.tuple(...list.map((mailbox) => spellingOf(mailbox)))),
        (spellings) => {
          const inboxes = spellings.map((spelling) => inboxOf(canonical(spelling)));
          expect(new Set(inboxes).size).toBe(spellings.length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is its own inbox: counting an inbox again changes nothing (property)', () => {
    fc.assert(
      fc.property(
        mailboxes.chain((mailbox) => spellingOf(mailbox)),
        (spelling) => {
          const inbox = inboxOf(canonical(spelling));
          expect(inboxOf(inbox)).toBe(inbox);
          expect(budgetOf(inbox)).toBe(inbox);
        },
      ),
    );
  });

  it('leaves a phone or a plain key as it is', () => {
    expect(budgetOf('+393331234567')).toBe('+393331234567');
    expect(budgetOf('order-42')).toBe('order-42');
  });
});

describe('canonicalMailbox', () => {
  it('refuses a Unicode local part, including look-alikes of an ASCII one, and accepts an internationalised domain as its ASCII form', () => {
    for (const raw of ['marío@example.org', 'mаrio@example.org' /* Cyrillic а */, 'δοκιμή@example.org', 'ｍario@example.org']) expect([raw, canonicalMailbox(raw)]).toEqual([raw, null]);
    expect(canonicalMailbox('mario@bücher.example')).toBe('mario@xn--bcher-kva.example');
    expect(canonicalMailbox('  Mario.Rossi@Example.ORG ')).toBe('mario.rossi@example.org');
  });

  it('refuses what is not exactly one mailbox: no local part, no domain, a list, a display name', () => {
    for (const raw of ['@example.org', 'mario@', 'mario', '', 'a@example.org,b@example.org', 'Mario <mario@example.org>', 'mario@example', 'a@b@example.org'])
      expect([raw, canonicalMailbox(raw)]).toEqual([raw, null]);
  });
});
