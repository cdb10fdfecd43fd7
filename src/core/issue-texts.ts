import { z } from 'zod';
import type { ApiError } from './errors';
import { textLocale, type TextLocale } from './text-locale';

/*
 * The one catalogue of `data.issues[].message` (what is wrong with a field), written in English
 * where the check is, and answered in the request's language like the envelope's `error`:
 * Italian unless the locale is `en` (docs/decisions.md, "Languages"). A request's schema speaks
 * through `issueMap` (zod's error map): the mistakes the service also names by hand (a missing
 * field, an empty one) read as its own texts here, so the same mistake reads the same from a
 * schema, a custom check or a journey; zod's locales word the rest. The service's own texts are
 * here, each with its Italian, and test/core/issue-texts.test.ts fails on one written in src/
 * without it.
 */
export const ITALIAN_ISSUES: Readonly<Record<string, string>> = {
  'not a valid phone number': 'non è un numero di telefono valido',
  'not a mobile number': 'non è un numero di cellulare',
  'phone region not allowed': 'invio SMS non consentito verso il paese di questo numero',
  'digits of a blocked range': 'le cifre di una numerazione bloccata',
  'must not be empty': 'non deve essere vuoto',
  'must be an http(s) address, its path and query in printable ASCII':
    'deve essere un indirizzo http(s), con percorso e query in ASCII stampabile',
  'from must be before to, at most 30 days apart': 'from deve precedere to, al massimo 30 giorni prima',
  'must be minutes, hours or days: 90m, 24h, 7d': 'indica minuti, ore o giorni: 90m, 24h, 7d',
  'give a phone or an email to send the code to': 'indica un telefono o un’email a cui inviare il codice',
  'give the OTP key in email (or uid)': 'indica la chiave del codice in email (o uid)',
  'give the phone to send the test SMS to': 'indica il telefono a cui inviare l’SMS di prova',
  'one email address (local@domain), nothing around it': 'un solo indirizzo email (nome@dominio), senza altro intorno',
  'one phone, one email address or one key, without spaces or separators':
    'un solo telefono, indirizzo email o chiave, senza spazi né separatori',
  'only a trusted caller (x-internal-key) may pass a body to the provider':
    'solo un chiamante fidato (x-internal-key) può passare un body al provider',
  'no field to update': 'nessun campo da aggiornare',
  'is required': 'è obbligatorio',
  'must be a numeric list id': 'deve essere l’id numerico di una lista',
  'feed or testata is required': 'serve feed o testata',
  'is required with testata': 'è richiesto insieme a testata',
  'is required with mlids': 'è richiesto insieme a mlids',
  'must hold at least one selection': 'deve contenere almeno una selezione',
  'selections, or testata with mlids, is required': 'servono selections, oppure testata con mlids',
  'a language tag such as it, en or en-GB': 'un codice di lingua come it, en o en-GB',
  'key not allowed': 'chiave non ammessa',
  'must be base64url': 'deve essere in base64url',
  'not the phone verified in this journey': 'non è il telefono verificato in questo percorso',
  'neither an email nor a phone number': 'né un’email né un numero di telefono',
  'is required at this step': 'è obbligatorio a questo passo',
  'a channel is for a phone; this code goes by mail': 'il canale vale per un telefono; questo codice va per email',
  'the channel is chosen by the service here': 'qui il canale lo sceglie il servizio',
};

/** Texts that carry a value (a depth, a feed): the pattern and its Italian. */
const ITALIAN_PATTERNS: ReadonlyArray<[RegExp, (...parts: string[]) => string]> = [
  [/^nested deeper than (\d+) levels$/, (depth) => `annidato oltre ${depth} livelli`],
  [/^does not match feed (.+) \((.+)\)$/, (feed, testata) => `non corrisponde al feed ${feed} (${testata})`],
  [/^no mailing-list key is configured for (.+)$/, (testata) => `nessuna chiave di lista è configurata per ${testata}`],
  [/^not offered for this number: (.+)$/, (channels) => `non disponibile per questo numero: ${channels}`],
];

/** An issue text in the answer's language. */
export function issueTextIn(message: string, locale: string | undefined): string {
  if (textLocale(locale) === 'en') return message;
  for (const [pattern, italian] of ITALIAN_PATTERNS) {
    const match = pattern.exec(message);
    if (match) return italian(...match.slice(1));
  }
  return ITALIAN_ISSUES[message] ?? message;
}

const zodTexts: Record<TextLocale, z.core.$ZodErrorMap> = {
  it: z.locales.it().localeError,
  en: z.locales.en().localeError,
};

/**
 * zod's error map in `locale` (a parse's `error` option): a field left out reads `is required`,
 * a string left empty `must not be empty`, as the service's own checks write them; anything else
 * in zod's words for that language.
 */
export function issueMap(locale: string | undefined): z.core.$ZodErrorMap {
  const language = textLocale(locale);
  return (issue) => {
    if (issue.code === 'invalid_type' && issue.input === undefined) return issueTextIn('is required', language);
    if (issue.code === 'too_small' && issue.origin === 'string' && Number(issue.minimum) === 1)
      return issueTextIn('must not be empty', language);
    return zodTexts[language](issue);
  };
}

/** The error's `data.issues` with their texts in `locale` (other data as it is). */
export function dataIn(err: ApiError, locale: string | undefined): Record<string, unknown> {
  const issues = err.data.issues;
  if (!Array.isArray(issues)) return err.data;
  return {
    ...err.data,
    issues: issues.map((issue: { path?: unknown; message?: unknown }) =>
      typeof issue.message === 'string' ? { ...issue, message: issueTextIn(issue.message, locale) } : issue,
    ),
  };
}
