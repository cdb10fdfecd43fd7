import fc from 'fast-check';
import { z } from 'zod';
import { budgetOf, canonicalMailbox, inboxOf, mailbox, recipientKey } from '../../src/core/address';
import { ITALIAN_ISSUES } from '../../src/core/issue-texts';

/*
 * The inbox every per-recipient count keys on: every spelling of one inbox (case, any `+tag`,
 * and for Gmail any dots and googlemail.com) is one budget key, and two inboxes never share one.
 */

const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const word = (min: number, max: number) =>
  fc.array(fc.constantFrom(...LETTERS), { minLength: min, maxLength: max }).map((chars) => chars.join(''));
/** A local part with no tag: words joined by `.`, `-` or `_` (dots only count where the provider heeds them). */
const localPart = fc
  .tuple(word(1, 8), fc.array(fc.tuple(fc.constantFrom('.', '-', '_'), word(1, 5)), { maxLength: 2 }))
  .map(([head, rest]) => head + rest.map(([sep, w]) => sep + w).join(''));
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
  fc
    .tuple(fc.array(fc.constantFrom(...LETTERS, '-', '_', '+'), { maxLength: 6 }), fc.option(word(1, 4), { nil: '' }))
    .map(([chars, more]) => `+${chars.join('')}${more && `.${more}`}`),
  { nil: '' },
);
const anyCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
/** Dots between any characters of a Gmail local part (never first, last or doubled: a dot-atom). */
const dotted = (local: string) =>
  fc
    .array(fc.boolean(), { minLength: local.length, maxLength: local.length })
    .map((dots) => [...local].map((c, i) => (dots[i] && i < local.length - 1 ? `${c}.` : c)).join(''));

/** Any spelling that reaches `mailbox`'s inbox. */
const spellingOf = (mailbox: Mailbox) => {
  const gmail = mailbox.domain === 'gmail.com';
  return fc
    .tuple(
      gmail ? dotted(mailbox.local) : fc.constant(mailbox.local),
      tag,
      gmail ? fc.constantFrom(...GMAIL) : fc.constant(mailbox.domain),
    )
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
    expect(
      ['victim@example.org', 'victim+1@example.org', 'victim+news@example.org', 'Victim+X@Example.org'].map((a) =>
        inboxOf(canonical(a)),
      ),
    ).toEqual(Array(4).fill('victim@example.org'));
    expect(
      ['bob@gmail.com', 'b.ob@gmail.com', 'bo.b@gmail.com', 'bob+a@googlemail.com', 'B.O.B+x.y@GoogleMail.com'].map(
        (a) => inboxOf(canonical(a)),
      ),
    ).toEqual(Array(5).fill('bob@gmail.com'));
  });

  it('keeps dots where the provider is not known to ignore them, and a local part that is all tag', () => {
    expect(inboxOf(canonical('a.b@example.org'))).toBe('a.b@example.org');
    expect(inboxOf(canonical('a.b+c@example.org'))).toBe('a.b@example.org');
    expect(inboxOf(canonical('+x@example.org'))).toBe('+x@example.org');
  });

  it('maps every spelling of one mailbox to one budget key (property)', () => {
    fc.assert(
      fc.property(
        mailboxes.chain((mailbox) =>
          fc.tuple(fc.constant(mailbox), fc.array(spellingOf(mailbox), { minLength: 1, maxLength: 6 })),
        ),
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

  it('leaves a phone or a plain key as it is, a plain key in its case (two keys, two budgets)', () => {
    expect(budgetOf('+393331234567')).toBe('+393331234567');
    expect(budgetOf('order-42')).toBe('order-42');
    expect(budgetOf('PNIa7Xk2mR0ssi')).toBe('PNIa7Xk2mR0ssi');
  });

  it("counts text that is no mailbox as it is, never merged into a mailbox's inbox", () => {
    // No local part on a Gmail domain: not the inbox of anyone at gmail.com.
    expect(inboxOf('@googlemail.com')).toBe('@googlemail.com');
    // A `+` after the `@` is in the domain, not a tag.
    expect(inboxOf('v@x+y.example')).toBe('v@x+y.example');
    expect(inboxOf('nobody')).toBe('nobody');
  });
});

describe('canonicalMailbox', () => {
  it('refuses a Unicode local part, including look-alikes of an ASCII one, and accepts an internationalised domain as its ASCII form', () => {
    for (const raw of [
      'marío@example.org',
      'mаrio@example.org' /* Cyrillic а */,
      'δοκιμή@example.org',
      'ｍario@example.org',
    ])
      expect([raw, canonicalMailbox(raw)]).toEqual([raw, null]);
    expect(canonicalMailbox('mario@bücher.example')).toBe('mario@xn--bcher-kva.example');
    expect(canonicalMailbox('  Mario.Rossi@Example.ORG ')).toBe('mario.rossi@example.org');
  });

  it('refuses what is not exactly one mailbox: no local part, no domain, a list, a display name', () => {
    for (const raw of [
      '@example.org',
      'mario@',
      'mario',
      '',
      'a@example.org,b@example.org',
      'Mario <mario@example.org>',
      'mario@example',
      'a@b@example.org',
    ])
      expect([raw, canonicalMailbox(raw)]).toEqual([raw, null]);
  });
});

/** What a field answers: its value, or the messages of its refusal. */
const parsed = (schema: z.ZodType, raw: unknown) => {
  const result = schema.safeParse(raw);
  return result.success
    ? { value: result.data as unknown }
    : { refused: result.error.issues.map((issue) => issue.message) };
};

describe('canonicalMailbox without an @', () => {
  it('refuses a domain IDNA cannot write', () => {
    for (const raw of ['mario@xn--a.example', 'mario@exa mple.org', 'mario@ex%ample.org'])
      expect([raw, canonicalMailbox(raw)]).toEqual([raw, null]);
  });

  it("refuses a domain alone, rather than reading its last character as the local part's end", () => {
    for (const raw of ['mario.example.org', 'example.org']) expect([raw, canonicalMailbox(raw)]).toEqual([raw, null]);
  });
});

describe('a mailbox field', () => {
  it('answers one mailbox in its canonical spelling, up to 254 characters', () => {
    expect(parsed(mailbox(), ' Mario.Rossi@Example.ORG ')).toEqual({ value: 'mario.rossi@example.org' });
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(53)}.example`;
    expect(longest).toHaveLength(254);
    expect(parsed(mailbox(), longest)).toEqual({ value: longest });
    expect(parsed(mailbox(), `x${longest}`)).toHaveProperty('refused');
  });

  it('refuses a list or a display name with a message the caller reads in its language', () => {
    for (const raw of ['a@example.org, b@example.org', 'Mario <mario@example.org>']) {
      const { refused } = parsed(mailbox(), raw) as { refused: string[] };
      expect([raw, refused]).toEqual([raw, ['one email address (local@domain), nothing around it']]);
      expect(ITALIAN_ISSUES[refused[0]!]).toBeDefined();
    }
  });

  it('is published as an email in the API description', () => {
    expect(z.toJSONSchema(mailbox(), { io: 'input' })).toMatchObject({
      type: 'string',
      format: 'email',
      maxLength: 254,
    });
  });
});

describe('a key that is a phone, a mailbox or a plain key', () => {
  const key = recipientKey();

  it('takes a phone as typed, with spaces, brackets, dots or dashes, trimmed', () => {
    for (const raw of ['+39 333 123 4567', '333 1234567', '+39 (333) 123-45.67', '0039 333 1234567'])
      expect([raw, parsed(key, raw)]).toEqual([raw, { value: raw }]);
    expect(parsed(key, ' +393331234567 ')).toEqual({ value: '+393331234567' });
    expect(parsed(key, '\t+39 333 123 4567\n')).toEqual({ value: '+39 333 123 4567' });
  });

  it('takes a plain key without separators as it is, and a mailbox in its canonical spelling', () => {
    for (const raw of ['order-42', 'PNIa7Xk2mR0ssi', 'user_7.x'])
      expect([raw, parsed(key, raw)]).toEqual([raw, { value: raw }]);
    expect(parsed(key, 'Mario@Example.org')).toEqual({ value: 'mario@example.org' });
  });

  it('refuses a list of phones, a phone with words around it, and a plain key with separators', () => {
    const separators = 'one phone, one email address or one key, without spaces or separators';
    for (const raw of [
      '+39 333 1234567; +39 333 7654321',
      '+393331234567,+393337654321',
      '333 1234567 <x>',
      'call 333 1234567',
      'Mario Rossi',
      'a(b)',
      '"order-42"',
      '+39 333 123 4567 890 123 456 78',
    ])
      expect([raw, parsed(key, raw)]).toEqual([raw, { refused: [separators] }]);
    expect(ITALIAN_ISSUES[separators]).toBeDefined();
    const { refused } = parsed(key, 'a@example.org, b@example.org') as { refused: string[] };
    expect(refused).toEqual(['one email address (local@domain), nothing around it']);
  });
});
