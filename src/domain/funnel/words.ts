import { LABELS, type JourneyId } from '../../../machines';
import type { Reason } from '../../core/errors';
import type { TextLocale } from '../../core/text-locale';

/*
 * How every funnel figure reads, in Italian and in English: one module for the pages of /flows,
 * the figures drawn on its diagrams and `npm run funnel`, so a duration, a share or a count is
 * spelled the same wherever it is shown (the JSON carries the numbers, the unit in the name).
 * The screens and journeys are the diagrams' (Italian, machines/diagrams/labels.ts, which the committed
 * SVGs are drawn from); English has its own names here. Every refusal reason of the catalogue
 * has product words in both languages: none is shown as its code.
 */

type Words = { it: string; en: string };

/** The mistake or the obstacle behind each refusal, as product says it (Italian as machines/diagrams/labels.ts where it has it). */
export const REFUSAL_WORDS = {
  invalid_request: { it: LABELS.refusals.invalid_request, en: 'a required field missing (a frontend error)' },
  unknown_action: { it: 'azione sconosciuta', en: 'unknown action' },
  metrics_not_enabled: { it: 'metriche non attive', en: 'metrics not enabled' },
  malformed_json: { it: 'richiesta illeggibile', en: 'unreadable request' },
  method_not_allowed: { it: 'metodo non ammesso', en: 'method not allowed' },
  payload_too_large: { it: 'richiesta troppo grande', en: 'request too large' },
  unsupported_media_type: { it: 'formato della richiesta non ammesso', en: 'request format not accepted' },
  form_expected: { it: 'modulo atteso', en: 'a form expected' },
  unauthorized: { it: 'non autorizzato', en: 'not authorised' },
  rate_limited: { it: 'troppe richieste: limite raggiunto', en: 'too many requests: a limit reached' },
  already_sent: { it: 'nuovo codice chiesto troppo presto', en: 'a new code asked for too soon' },
  expired: { it: LABELS.refusals.expired, en: 'code expired' },
  invalid: { it: LABELS.refusals.invalid, en: 'wrong code' },
  too_many_attempts: { it: LABELS.refusals.too_many_attempts, en: 'too many wrong codes' },
  delivery_failed: {
    it: 'codice non inviato: nessun fornitore lo ha accettato',
    en: 'code not sent: no provider took it',
  },
  channel_not_configured: { it: 'canale di invio non configurato', en: 'sending channel not configured' },
  region_not_allowed: { it: 'paese del numero non servito', en: "the number's country not served" },
  phone_not_mobile: { it: 'il numero non è un cellulare', en: 'not a mobile number' },
  sms_destination_limited: { it: 'troppi SMS verso quei numeri', en: 'too many texts to those numbers' },
  sms_destination_blocked: {
    it: 'numeri bloccati dalla difesa dal pumping',
    en: 'numbers blocked by the pumping defence',
  },
  challenge_required: { it: 'verifica anti-bot richiesta', en: 'bot check required' },
  phone_taken: { it: LABELS.refusals.phone_taken, en: 'the phone belongs to another account' },
  phone_not_verified: { it: LABELS.refusals.phone_not_verified, en: 'a phone other than the one verified by the code' },
  phone_on_hold: {
    it: LABELS.refusals.phone_on_hold,
    en: "the phone is on hold: the email's owner has not chosen whether to keep it",
  },
  proof_required: { it: LABELS.refusals.proof_required, en: "the previous step's proof missing" },
  invalid_proof: {
    it: LABELS.refusals.invalid_proof,
    en: "email, phone or account other than the proof's (the proof is another user's)",
  },
  token_required: { it: 'manca il token di accesso', en: 'access token missing' },
  invalid_token: { it: 'token di accesso non valido', en: 'access token not valid' },
  invalid_credentials: { it: 'password sbagliata', en: 'wrong password' },
  user_not_found: { it: 'utente non trovato', en: 'user not found' },
  registration_refused: {
    it: 'registrazione rifiutata dal fornitore di identità',
    en: 'registration refused by the identity provider',
  },
  upstream_error: { it: 'un servizio esterno non risponde', en: 'an upstream service not answering' },
  not_configured: { it: 'servizio non configurato', en: 'service not configured' },
  subscription_failed: { it: 'iscrizione alla newsletter non riuscita', en: 'newsletter subscription failed' },
  partial_failure: { it: 'iscrizione non riuscita per alcune testate', en: 'subscription failed for some headlines' },
  store_unavailable: { it: 'archivio dei codici non raggiungibile', en: 'code store unreachable' },
  passkeys_disabled: { it: 'passkey non disponibili', en: 'passkeys not available' },
  passkey_challenge_invalid: { it: 'richiesta passkey scaduta o già usata', en: 'passkey request expired or used' },
  passkey_unknown: { it: 'passkey sconosciuta', en: 'unknown passkey' },
  passkey_refused: { it: 'passkey non accettata', en: 'passkey not accepted' },
  internal_error: { it: 'errore interno', en: 'internal error' },
} as const satisfies Record<Reason, Words>;

/** Refusals a field says more about (`reason:field`). */
const REFUSAL_BY_FIELD: Record<string, Words> = {
  'invalid_request:identifier': {
    it: LABELS.refusals['invalid_request:identifier'],
    en: 'neither an email nor a phone number',
  },
  'invalid_request:uid': { it: LABELS.refusals['invalid_request:uid'], en: 'the account (uid) missing' },
};

/** A refusal in product's words; a reason the catalogue does not know (none should reach here) as "another refusal". */
export function refusalWords(reason: string, locale: TextLocale = 'it', field?: string): string {
  const words =
    (field !== undefined ? REFUSAL_BY_FIELD[`${reason}:${field}`] : undefined) ??
    (REFUSAL_WORDS as Record<string, Words>)[reason];
  return words ? words[locale] : locale === 'it' ? 'altro rifiuto' : 'another refusal';
}

/** The screens' names in English, by state (the Italian are machines/diagrams/labels.ts's). */
const SCREEN_NAMES_EN = {
  enteringIdentifier: 'Log in or sign up',
  askingPassword: 'Enter your password',
  awaitingPhoneCode: 'Enter the SMS code',
  awaitingEmailCode: 'Enter the email code',
  enteringRegistrationEmail: 'Sign up with your email',
  askingRegistrationEmail: 'Choose the email to sign up with',
  awaitingRegistrationEmailCode: 'Enter the code sent to the sign-up email',
  fillingPhoneRegistrationForm: 'Complete your registration',
  fillingEmailRegistrationForm: 'Complete your registration',
  awaitingPhoneOnFileCode: "Confirm the account's phone",
  askingPhone: 'Add a phone',
  awaitingNewPhoneCode: "Enter the new phone's SMS code",
  loggedIn: 'Logged in',
  passkeyOffered: 'Create your passkey',
  passkeyEnrolled: 'Passkey created',
  refused: 'Request refused',
} as const satisfies Partial<Record<keyof typeof LABELS.states, string>>;

export const JOURNEY_TITLES_EN = {
  'phone-login': 'Log in with a phone',
  'phone-registration': 'Sign up with a phone',
  'email-registration': 'Sign up with an email, then a phone and the profile',
  'email-login-with-phone': 'Log in with an email, account with a phone',
  'email-login-unconfirmed-phone': 'Log in with a never-confirmed email, phone confirmed',
  'email-login-phone-declined': 'Log in with a never-confirmed email, «Not my number»',
  'email-login-add-phone': 'Log in with an email and add a phone',
  'email-signup': 'Sign up from «Sign up with your email»',
  password: 'Log in with a password',
  'passkey-login': 'Log in with a passkey',
  'passkey-enrol': 'Enrol a passkey after a phone login',
} as const satisfies Record<JourneyId, string>;

/** A screen's title in the locale: `14 · Enter the SMS code` (the figures carry the Italian). */
export function screenName(
  screen: { state: string; step: string | number | null; title: string },
  locale: TextLocale,
): string {
  if (locale === 'it') return screen.title;
  const name = (SCREEN_NAMES_EN as Record<string, string>)[screen.state] ?? screen.state;
  return screen.step === null ? name : `${screen.step} · ${name}`;
}

export function journeyName(journey: { id: string; title: string }, locale: TextLocale): string {
  return locale === 'it' ? journey.title : ((JOURNEY_TITLES_EN as Record<string, string>)[journey.id] ?? journey.id);
}

const number = (value: number, locale: TextLocale, digits = 0) =>
  value.toLocaleString(locale === 'it' ? 'it-IT' : 'en-GB', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });

/** A share (0..1) as a percentage with one decimal: `45,0 %` / `45.0 %`; `–` for none. */
export const percent = (value: number | null, locale: TextLocale = 'it') =>
  value === null ? '–' : `${number(Math.round(value * 1000) / 10, locale, 1)} %`;

/**
 * A duration, the upper bound of the bucket it fell in: `≤ 30 s`, `≤ 90 s`, `≤ 2 min`, `≤ 1 h`;
 * a bound is never rounded into another (90 s is not "2 min"). `–` for none.
 */
export const seconds = (value: number | null) => {
  if (value === null) return '–';
  if (value < 60 || value % 60 !== 0) return `≤ ${value} s`;
  return value % 3600 === 0 ? `≤ ${value / 3600} h` : `≤ ${value / 60} min`;
};

/** A count of people: `1 persona`, `8 persone` / `1 person`, `8 people`. */
export const persons = (n: number, locale: TextLocale = 'it') =>
  locale === 'it' ? `${n} ${n === 1 ? 'persona' : 'persone'}` : `${n} ${n === 1 ? 'person' : 'people'}`;
/** A count of requests: `1 volta`, `11 volte` / `1 time`, `11 times`. */
const times = (n: number, locale: TextLocale = 'it') =>
  locale === 'it' ? `${n} ${n === 1 ? 'volta' : 'volte'}` : `${n} ${n === 1 ? 'time' : 'times'}`;

/** A refusal as people and requests, and the share of those who reached the screen: `codice sbagliato: 8 persone (20,0 %), 11 volte`. */
export const refusalText = (
  refusal: { reason: string; people: number; count: number },
  arrived: number,
  locale: TextLocale = 'it',
) =>
  `${refusalWords(refusal.reason, locale)}: ${persons(refusal.people, locale)}${arrived > 0 ? ` (${percent(refusal.people / arrived, locale)})` : ''}, ${times(refusal.count, locale)}`;

/** Requests that repeated a step, and the people who sent them: `3 richieste in più (2 persone)`. */
export const repeatsText = (repeats: number, people: number, locale: TextLocale = 'it') =>
  locale === 'it'
    ? `${repeats} ${repeats === 1 ? 'richiesta' : 'richieste'} in più (${persons(people, locale)})`
    : `${repeats} more ${repeats === 1 ? 'request' : 'requests'} (${persons(people, locale)})`;

/** Where the people still on a screen are, in the split of a shared screen. */
export const stillThere = (locale: TextLocale = 'it') =>
  locale === 'it' ? 'ancora qui o fermi' : 'still here or stopped';
