import { getCountries, Metadata, type CountryCode, type MetadataJson } from 'libphonenumber-js/core';
import maxMetadata from 'libphonenumber-js/max/metadata';

// The full metadata (number types), the one src/domain/phone.ts asks whether a number is mobile.
const metadataJson = maxMetadata as unknown as MetadataJson;

/*
 * The phones a request field accepts, as one JSON Schema pattern for the OpenAPI document: written
 * from the numbering plans libphonenumber-js validates with (src/domain/phone.ts), so the document
 * states the parser's rule rather than a copy of it. Each region's mobile numbers (its whole plan
 * where it names no mobile range) after `+` and its calling code, and the national mobile numbers
 * of the default region, each digit after the first possibly preceded by a space, dot, dash or
 * bracket as people type them.
 */

/** What the library's numbering plan answers beyond its thin typings. */
interface Plan {
  callingCode(): string;
  nationalNumberPattern(): string;
  type(type: 'MOBILE'): { pattern(): string } | undefined;
}

function planOf(metadata: Metadata, region: CountryCode): Plan {
  metadata.selectNumberingPlan(region);
  return metadata.numberingPlan as unknown as Plan;
}

const mobileOf = (plan: Plan): string => plan.type('MOBILE')?.pattern() ?? plan.nationalNumberPattern();

/** A digit of the plan's patterns (`\\d`, a class, a literal) with its quantifier; or a quantifier of a group, kept. */
const DIGIT = /(\{\d+(?:,\d*)?\})|(\\d|\[[^\]]*\]|[0-9])(\{\d+(?:,\d*)?\}|\?)?/g;

/** `pattern` with a typed separator allowed before each digit it matches. */
const typed = (pattern: string): string =>
  pattern.replace(
    DIGIT,
    (_all, groupQuantifier: string | undefined, digit: string, quantifier = '') =>
      groupQuantifier ?? `(?:[ ().-]?${digit})${quantifier}`,
  );

/** The pattern of a phone in E.164, or national in `defaultRegion`, that the service parses as a mobile number. */
function phonePattern(defaultRegion: CountryCode): string {
  const metadata = new (Metadata as unknown as new (json: MetadataJson) => Metadata)(metadataJson);
  const byCode = new Map<string, Set<string>>();
  for (const region of getCountries(metadataJson)) {
    const plan = planOf(metadata, region);
    byCode.set(plan.callingCode(), (byCode.get(plan.callingCode()) ?? new Set()).add(mobileOf(plan)));
  }
  const international = [...byCode]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, patterns]) => `${code}(?:${[...patterns].join('|')})`)
    .join('|');
  const digits = `(?:\\+(?:${international})|(?:${mobileOf(planOf(metadata, defaultRegion))}))`;
  // As typed: a space, dot, dash or bracket may come before any digit but the first, within toE164's 5 to 25 characters.
  return `^(?=[+\\d])(?=.{5,25}$)${typed(digits)}$`;
}

/**
 * The pattern of the document's phones: national numbers in IT, the default of sms.default_region
 * (a service configured for another region reads national numbers in that one instead).
 */
export const PHONE_PATTERN = phonePattern('IT');
