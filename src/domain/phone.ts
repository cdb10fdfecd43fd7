import { LRUCache } from 'lru-cache';
import { parsePhoneNumberFromString, type CountryCode, type NumberType, type PhoneNumber } from 'libphonenumber-js';
import { apiError } from '../core/errors';
// The full metadata knows number types (mobile, landline, premium, VoIP); the default one does not.
import { parsePhoneNumberFromString as parseWithTypes } from 'libphonenumber-js/max';

/*
 * Phones cross three systems in three forms: what the user typed, E.164 for the SMS gateway,
 * and bare digits in the identity provider's NUMBER custom field (no `+`, sometimes without the
 * country code). Everything compares by E.164.
 */

/*
 * The last answers of toE164: a login request asks it of the same number several times (the
 * phone typed, the provider's stored digits, the search, the send), and each parse walks the
 * metadata. The answer depends on the text and the region alone; null is kept as ''.
 */
const normalised = new LRUCache<string, string>({ max: 4096 });

/** E.164 (`+393331234567`) of a typed phone or stored digits, or null when it is not a valid phone. */
export function toE164(input: string, defaultRegion: string): string | null {
  const trimmed = input.trim();
  if (!/^[+\d][\d\s().-]{4,24}$/.test(trimmed)) return null;
  const key = `${defaultRegion}|${trimmed}`;
  let e164 = normalised.get(key);
  if (e164 === undefined) normalised.set(key, (e164 = parseE164(trimmed, defaultRegion) ?? ''));
  return e164 === '' ? null : e164;
}

function parseE164(trimmed: string, defaultRegion: string): string | null {
  // Written as E.164 already (what frontends send back, every stored key): the full metadata's
  // parse, which the send needs for the number's type anyway, answers both. Its isValid() is
  // stricter than the default's, so a number it takes, the default takes too, as the same
  // number; one it refuses goes the default's way below, as before.
  if (isE164(trimmed)) {
    const full = parseWithTypes(trimmed);
    if (full?.isValid() && full.number === trimmed) {
      known.set(trimmed, { parsed: full });
      return trimmed;
    }
  }
  const parsed =
    parsePhoneNumberFromString(trimmed, defaultRegion as CountryCode) ??
    // Stored digits may carry the country code without the `+`.
    (trimmed.startsWith('+') ? undefined : parsePhoneNumberFromString(`+${trimmed}`));
  if (parsed?.isValid()) return parsed.number;
  const international = trimmed.startsWith('+') ? undefined : parsePhoneNumberFromString(`+${trimmed}`);
  return international?.isValid() ? international.number : null;
}

/** The digits the identity provider's NUMBER field holds: E.164 without the `+`. */
/** A phone shown to a user who did not type it: the country code and the last three digits (`+39 *******567`). */
export function phoneHint(e164: string): string {
  const parsed = parsePhoneNumberFromString(e164);
  const national = parsed?.nationalNumber ?? e164.replace(/\D/g, '');
  const country = parsed ? `+${parsed.countryCallingCode} ` : '';
  return `${country}${'*'.repeat(Math.max(0, national.length - 3))}${national.slice(-3)}`;
}

export const toStoredDigits = (e164: string): string => e164.replace(/^\+/, '');

/** The region (ISO 3166 alpha-2) of an E.164 number, for the SMS toll-fraud guard. */
export function regionOf(e164: string): string | undefined {
  return parsePhoneNumberFromString(e164)?.country;
}

/** True when two phones, in any of their forms, are the same number. */
export function samePhone(a: string, b: string, defaultRegion: string): boolean {
  const left = toE164(a, defaultRegion);
  return left !== null && left === toE164(b, defaultRegion);
}

/** Written as E.164 (`+` and up to 15 digits, no spaces): what every phone is stored as, if it is a valid number. */
export const isE164 = (text: string): boolean => /^\+[1-9]\d{1,14}$/.test(text);

/** An identifier that looks like a phone rather than an email. */
export const looksLikePhone = (identifier: string): boolean =>
  !identifier.includes('@') && /^[+\d][\d\s().-]{4,24}$/.test(identifier.trim());

interface Facts {
  readonly region: string | undefined;
  readonly type: NumberType;
  readonly mobile: boolean;
}

/*
 * The full metadata's parse of a number, kept for the last numbers seen: a send asks it twice
 * (the OTP service: may this number be texted; the SMS router: which providers serve it), and a
 * resend asks again. A number's facts depend on the number alone, so one cache serves every
 * caller in the process. Validity stays with the default metadata (toE164): the full one's
 * isValid() is stricter and would refuse numbers accepted today, so toE164 takes its answer only
 * when it is yes (parseE164).
 */
// A number toE164 parsed with the full metadata is kept as that parse, its type read on first
// ask: a key checked and never sent to (a wrong guess's) costs no type lookup.
const known = new LRUCache<string, Facts | { readonly parsed: PhoneNumber }>({ max: 1024 });

function factsFrom(e164: string, parsed: PhoneNumber | undefined): Facts {
  const type = parsed?.getType();
  const facts = { region: parsed?.country, type, mobile: type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE' };
  known.set(e164, facts);
  return facts;
}

function factsOf(e164: string): Facts {
  const entry = known.get(e164);
  if (entry === undefined) return factsFrom(e164, parseWithTypes(e164));
  return 'parsed' in entry ? factsFrom(e164, entry.parsed) : entry;
}

/** Where an E.164 number is and whether it can take an SMS, from one parse with the full metadata. */
export function smsFacts(e164: string): { region: string | undefined; mobile: boolean } {
  return factsOf(e164);
}

/** Where an E.164 number is and its type (MOBILE, FIXED_LINE_OR_MOBILE, ...; empty when unknown): the SMS ledger's columns. */
export function numberFacts(e164: string): { region: string; type: string } {
  const facts = factsOf(e164);
  return { region: facts.region ?? '', type: facts.type ?? '' };
}

/** E.164 of a phone field, or `invalid_request` naming the field. */
export function requirePhone(phone: string, field: string, defaultRegion: string): string {
  const e164 = toE164(phone, defaultRegion);
  if (!e164) {
    throw apiError('invalid_request', { data: { issues: [{ path: field, message: 'not a valid phone number' }] } });
  }
  return e164;
}
