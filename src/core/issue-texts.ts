import type { ApiError } from './errors';

/*
 * The texts of `data.issues[].message` (what is wrong with a field), written in English where
 * the check is, and answered in the request's language like the envelope's `error`: Italian
 * unless the locale is `en` (docs/decisions.md, "Languages"). zod's own texts come in either
 * language from zod's locales (src/http/validate.ts); the service's own are here, each with its
 * Italian, and test/core/issue-texts.test.ts fails on one written in src/ without it.
 */
export const ITALIAN_ISSUES: Readonly<Record<string, string>> = {
  'not a valid phone number': 'non è un numero di telefono valido',
  'not a mobile number': 'non è un numero di cellulare',
  'phone region not allowed': 'invio SMS non consentito verso il paese di questo numero',
  'digits of a blocked range': 'le cifre di una numerazione bloccata',
  'must not be empty': 'non deve essere vuoto',
  'from must be before to, at most 30 days apart': 'from deve precedere to, al massimo 30 giorni prima',
  'must be minutes, hours or days: 90m, 24h, 7d': 'indica minuti, ore o giorni: 90m, 24h, 7d',
  'give a phone or an email to send the code to': 'indica un telefono o un’email a cui inviare il codice',
  'give the OTP key in email (or uid)': 'indica la chiave del codice in email (o uid)',
  'give the phone to send the test SMS to': 'indica il telefono a cui inviare l’SMS di prova',
  'one email address (local@domain), nothing around it': 'un solo indirizzo email (nome@dominio), senza altro intorno',
  'one phone, one email address or one key, without spaces or separators': 'un solo telefono, indirizzo email o chiave, senza spazi né separatori',
  'only a trusted caller (x-internal-key) may pass a body to the provider': 'solo un chiamante fidato (x-internal-key) può passare un body al provider',
  'no field to update': 'nessun campo da aggiornare',
  'is empty': 'è vuoto',
  'is required': 'è obbligatorio',
  'must be a numeric list id': 'deve essere l’id numerico di una lista',
  'feed or testata is required': 'serve feed o testata',
  'is required with testata': 'è richiesto insieme a testata',
  'is required with mlids': 'è richiesto insieme a mlids',
  'must hold at least one selection': 'deve contenere almeno una selezione',
  'selections, or testata with mlids, is required': 'servono selections, oppure testata con mlids',
  'a language tag such as it, en or en-GB': 'un codice di lingua come it, en o en-GB',
  'key not allowed': 'chiave non ammessa',
  'not the phone verified in this journey': 'non è il telefono verificato in questo percorso',
};

/** Depth limit of a body (src/http/validate.ts): its text carries the number. */
const NESTED = /^nested deeper than (\d+) levels$/;

/** An issue text in the answer's language. */
export function issueTextIn(message: string, locale: string | undefined): string {
  if (locale === 'en') return message;
  const nested = NESTED.exec(message);
  if (nested) return `annidato oltre ${nested[1]} livelli`;
  return ITALIAN_ISSUES[message] ?? message;
}

/** The error's `data.issues` with their texts in `locale` (other data as it is). */
export function dataIn(err: ApiError, locale: string | undefined): Record<string, unknown> {
  const issues = err.data.issues;
  if (!Array.isArray(issues)) return err.data;
  return {
    ...err.data,
    issues: issues.map((issue: { path?: unknown; message?: unknown }) => (typeof issue.message === 'string' ? { ...issue, message: issueTextIn(issue.message, locale) } : issue)),
  };
}
