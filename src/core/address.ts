import { isEmailValid } from '@hapi/address';
import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { PHONE_PATTERN } from './phone-pattern';

/*
 * One mailbox per field, in one spelling (docs/security.md, "Addresses"). A field that names a
 * recipient or a key is parsed here, at the edge, and what comes out is the only spelling the
 * service knows from then on: what is mailed to, what a record says was reached, what a proof
 * names and what every cooldown and limit counts. A display name, a comment, angle brackets, a
 * group, a list, whitespace or a separator is refused, not read: a mailer reading one address
 * out of a list while the record keeps the list was a takeover.
 *
 * Validation is @hapi/address's (RFC 5321 lengths, one `@`, dot-atom local part, a domain of at
 * least two labels), not a regular expression of ours. The local part is ASCII: an
 * internationalised one is rare and is where look-alike spellings live. An internationalised
 * domain is accepted and written as its ASCII form (IDNA). The whole address is lower-cased:
 * providers treat local parts without regard to case, and so have this service's keys always.
 */

export type Mailbox = string & z.BRAND<'Mailbox'>;

/** The canonical spelling of one mailbox, or null when `raw` is anything but exactly one. */
export function canonicalMailbox(raw: string): Mailbox | null {
  const text = raw.trim();
  const at = text.lastIndexOf('@');
  // Stryker disable next-line EqualityOperator: an empty local part (`@` first) is refused by isEmailValid below as well; only no `@` at all must stop here.
  if (at <= 0) return null;
  // A domain IDNA cannot write is '', and `local@` is no address to isEmailValid.
  const address = `${text.slice(0, at)}@${domainToASCII(text.slice(at + 1))}`.toLowerCase();
  return isEmailValid(address, { allowUnicode: false }) ? (address as Mailbox) : null;
}

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/**
 * The mailboxes canonicalMailbox accepts, as a JSON Schema pattern for the document: an ASCII
 * dot-atom local part of at most 64 characters, and a domain of two labels or more whose last
 * starts with a letter. An internationalised domain, which the service writes in ASCII, is
 * named in the description rather than in the pattern.
 */
export const MAILBOX_PATTERN = `^(?=[^@]{1,64}@)${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`;

/** A request field holding one mailbox, answered in its canonical spelling. */
export const mailbox = () =>
  z
    .string()
    .max(254)
    .meta({ format: 'email', pattern: MAILBOX_PATTERN })
    .transform((raw, ctx): Mailbox => {
      const address = canonicalMailbox(raw);
      if (address === null)
        ctx.addIssue({ code: 'custom', message: 'one email address (local@domain), nothing around it' });
      return address ?? (raw as Mailbox);
    });

/** Characters no phone, mailbox or plain key holds: a list, a display name, a comment or a quote. */
const SEPARATORS = /[\s,;<>()[\]"'\\]/;
/** How a phone may be typed (checked for real against the numbering plan once the region is known). */
const PHONE_SPELLING = /^[+\d][\d\s().-]{4,24}$/;
/** A plain key as the document states it: no `@`, no separator, and not typed like a phone (one such is read as a phone). */
const PLAIN_KEY_PATTERN = `^[^@\\s,;<>()[\\]"'\\\\]*[^@\\s,;<>()[\\]"'\\\\\\d+.-][^@\\s,;<>()[\\]"'\\\\]*$`;

/**
 * A key or an identifier that is "a phone or an email": with an `@` it is one mailbox, in its
 * canonical spelling; typed like a phone it stays as typed, for the service to write as E.164
 * with its configured region; anything else is a plain key without separators.
 */
export const recipientKey = (max = 254) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .meta({ anyOf: [{ pattern: MAILBOX_PATTERN }, { pattern: PHONE_PATTERN }, { pattern: PLAIN_KEY_PATTERN }] })
    .transform((raw, ctx) => {
      if (raw.includes('@')) {
        const address = canonicalMailbox(raw);
        if (address === null)
          ctx.addIssue({ code: 'custom', message: 'one email address (local@domain), nothing around it' });
        return address ?? raw;
      }
      if (!PHONE_SPELLING.test(raw) && SEPARATORS.test(raw))
        ctx.addIssue({
          code: 'custom',
          message: 'one phone, one email address or one key, without spaces or separators',
        });
      return raw;
    });

/*
 * The inbox a mailbox delivers to: what every per-recipient count keys on (docs/security.md,
 * "Sends are charged to who receives them"). Mail servers deliver `name+anything@domain` to
 * `name@domain`, and Gmail also ignores dots in the local part and answers for googlemail.com
 * as for gmail.com, so `v@x`, `v+1@x` and `v+news@x`, or `b.ob@gmail.com` and
 * `bob+a@googlemail.com`, are one inbox; counted apart, each spelling had its own cooldown
 * and cap while all of them reached one person.
 *
 * The `+tag` is removed on every domain, not only on providers known to honour it: merging two
 * people whose addresses differ only after a `+` makes them share a budget (a send waits for a
 * cooldown), where not merging lets anyone flood an inbox through a domain we did not list.
 * Dots are removed only where the provider is known to ignore them: on other domains `a.b` and
 * `ab` are often two people. A local part that is all tag (`+x@domain`) keeps its spelling.
 *
 * Only counting uses the inbox: the code still goes to, is recorded as and proves the
 * canonical address the person typed. The inbox is derived from that canonical value, never
 * parsed again from a request.
 */

export type Inbox = string & z.BRAND<'Inbox'>;

/** Domains whose provider ignores dots in the local part, each written as the domain it is known as. */
const DOTLESS_DOMAINS: ReadonlyMap<string, string> = new Map([
  ['gmail.com', 'gmail.com'],
  ['googlemail.com', 'gmail.com'],
]);

/** The inbox of a canonical mailbox (lower-cased again for one an upstream gave, the identity provider's). */
export function inboxOf(address: string): Inbox {
  const lower = address.toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at <= 0) return lower as Inbox;
  const tag = lower.indexOf('+');
  const tagged =
    tag > 0 &&
    // Stryker disable next-line EqualityOperator: `tag` and `at` index different characters, so they are never equal.
    tag < at;
  let local = tagged ? lower.slice(0, tag) : lower.slice(0, at);
  let domain = lower.slice(at + 1);
  const unified = DOTLESS_DOMAINS.get(domain);
  if (unified !== undefined) {
    local = local.replaceAll('.', '') || local;
    domain = unified;
  }
  return `${local}@${domain}` as Inbox;
}

/** What a send to `recipient` is counted on: a mailbox's inbox; a phone (E.164) or a plain key as it is. */
export const budgetOf = (recipient: string): string => (recipient.includes('@') ? inboxOf(recipient) : recipient);
