/*
 * The one error type of the service, and its catalogue. Anything that can fail with a stable,
 * documented outcome throws an ApiError; one middleware (src/http/app.ts, `toApiError`) maps
 * every error to one, and src/http/envelope.ts writes its envelope. Clients translate axios errors into it; nothing outside src/clients sees axios.
 *
 * Every reason is written once, below, with its HTTP status and its Italian text (English
 * beside it, in `englishTexts`, for requests in `en`): an error is
 * made with `apiError(reason, { params, data, headers, extra, cause })` and nowhere else
 * (eslint forbids `new ApiError` outside this file). What a particular failure knows beyond
 * its reason travels in `data` (data.upstream, data.key, data.issues...), never in its text.
 */

/** A reason's text: fixed, or made from the few parameters a person needs to read in it. */
type Message = string | ((params: never) => string);

interface CatalogueEntry {
  /** HTTP status; 200 for business outcomes and validation failures (docs/contract.md#errors). */
  readonly status: number;
  readonly message: Message;
}

export const catalogue = {
  invalid_request: { status: 200, message: 'Richiesta non valida.' },
  unknown_action: { status: 404, message: 'Azione sconosciuta.' },
  metrics_not_enabled: {
    status: 404,
    message:
      'Metriche non disponibili su questa porta: imposta metrics.token (Authorization: Bearer) oppure metrics.port.',
  },
  malformed_json: { status: 400, message: 'Il corpo della richiesta non è JSON valido.' },
  /** `allow`: the methods the resource takes, as its Allow header lists them. */
  method_not_allowed: {
    status: 405,
    message: ({ allow }: { allow: string }) => `Metodo non consentito: usa ${allow}.`,
  },
  payload_too_large: { status: 413, message: 'Richiesta troppo grande.' },
  unsupported_media_type: {
    status: 415,
    message:
      'Il corpo della richiesta deve essere JSON (Content-Type: application/json), non compresso o compresso con gzip, deflate o br.',
  },
  /** A delivery receipt, which providers post as a form: the 415 names what it expects, not JSON. */
  form_expected: {
    status: 415,
    message: 'La ricevuta deve essere un modulo (Content-Type: application/x-www-form-urlencoded).',
  },
  unauthorized: { status: 401, message: 'Token mancante o non valido.' },
  rate_limited: {
    status: 429,
    message: ({ retryAfter }: { retryAfter: number }) => `Troppe richieste. Riprova tra ${retryAfter} secondi.`,
  },
  // The contract's texts to the letter (docs/contract.md#errors): already_sent, expired, invalid, phone_taken (no final period).
  already_sent: {
    status: 200,
    message: ({ retryAfter }: { retryAfter: number }) => `OTP già inviato. Riprova tra ${retryAfter} secondi.`,
  },
  expired: { status: 200, message: 'OTP scaduto. Richiedi un nuovo codice.' },
  invalid: { status: 200, message: 'OTP non valido.' },
  too_many_attempts: { status: 200, message: 'Troppi tentativi. Richiedi un nuovo codice.' },
  delivery_failed: { status: 200, message: 'Invio del codice non riuscito. Riprova.' },
  channel_not_configured: { status: 200, message: 'Nessun canale di invio configurato per questo destinatario.' },
  region_not_allowed: { status: 200, message: 'Invio SMS non consentito verso questo paese.' },
  phone_not_mobile: { status: 200, message: 'Il numero indicato non è un cellulare: inserisci un numero mobile.' },
  // SMS pumping defence (docs/security.md): too many codes to one country or number range, or a range blocked for codes nobody verifies.
  sms_destination_limited: {
    status: 200,
    message: ({ retryAfter }: { retryAfter: number }) =>
      `Troppi SMS verso questa destinazione. Riprova tra ${retryAfter} secondi.`,
  },
  sms_destination_blocked: { status: 200, message: 'Invio SMS verso questa numerazione temporaneamente sospeso.' },
  /** The bot challenge (docs/security.md): `data.challenge` says what to solve; the request is repeated with `challenge`. */
  challenge_required: { status: 200, message: 'Verifica anti-bot richiesta: completa la verifica e riprova.' },
  phone_taken: { status: 200, message: 'Telefono già registrato su un altro account' },
  phone_not_verified: { status: 200, message: 'Telefono non verificato: conferma prima il codice inviato al numero.' },
  /** A phone an email claim dropped, held while the email's owner proves or declines it (step 65). */
  phone_on_hold: {
    status: 200,
    message: "Questo numero è in attesa di conferma dal titolare dell'email dell'account: accedi con l'email.",
  },
  proof_required: { status: 200, message: 'Verifica richiesta: conferma prima il codice ricevuto.' },
  invalid_proof: { status: 200, message: 'Sessione non valida o scaduta. Ricomincia l’accesso.' },
  token_required: { status: 200, message: 'Token di accesso mancante: accedi di nuovo.' },
  invalid_token: { status: 200, message: 'Sessione scaduta o non valida. Accedi di nuovo.' },
  invalid_credentials: { status: 200, message: 'Email o password non corretti.' },
  user_not_found: { status: 200, message: 'Utente non trovato.' },
  /** The provider refused to create the account (the email has one already, or it is not acceptable): its words stay in the log. */
  registration_refused: {
    status: 200,
    message: 'Registrazione non riuscita: se hai già un account con questa email, accedi.',
  },
  /** `service` as the text names it: 'di identità', 'SMS', 'di posta', 'newsletter'... (each client's `label`). */
  upstream_error: {
    status: 200,
    message: ({ service }: { service: string }) => `Servizio ${service} non disponibile. Riprova più tardi.`,
  },
  /** `key`: the configuration key to set (also in `data.key` where the answer has one). */
  not_configured: { status: 200, message: ({ key }: { key: string }) => `Servizio non configurato (${key}).` },
  subscription_failed: { status: 200, message: 'Iscrizione alla newsletter non riuscita. Riprova più tardi.' },
  partial_failure: { status: 200, message: 'Iscrizione non riuscita per alcune testate: riprova per quelle indicate.' },
  // Passkeys (docs/passkeys.md): business outcomes, 200 like the codes'.
  passkeys_disabled: { status: 200, message: 'Accesso con passkey non disponibile: accedi con un codice.' },
  /** The options of the ceremony are forged, expired or already used (`data.why`): start again. */
  passkey_challenge_invalid: { status: 200, message: 'Richiesta passkey scaduta o già usata. Riprova.' },
  /** A passkey this service does not know (deleted, revoked, another site's): `data.credential_id` to tell the browser. */
  passkey_unknown: { status: 200, message: 'Questa passkey non è più valida: accedi con un codice.' },
  /** The authenticator's answer does not verify (`data.why`: origin, rp_id, signature, user_verification, counter, ...). */
  passkey_refused: { status: 200, message: 'Passkey non accettata. Riprova o accedi con un codice.' },
  // 503, not 200: a transport-level failure of ours, which load balancers and clients may retry.
  store_unavailable: { status: 503, message: 'Archivio dei codici non raggiungibile. Riprova più tardi.' },
  internal_error: { status: 500, message: 'Errore interno. Riprova più tardi.' },
} as const satisfies Record<string, CatalogueEntry>;

/** Stable snake_case code of an outcome: `data.reason` of the envelope. */
export type Reason = keyof typeof catalogue;

/** The English text of each reason, with the same parameters as its Italian one. */
type EnglishTexts = {
  readonly [R in Reason]: (typeof catalogue)[R]['message'] extends string ? string : (typeof catalogue)[R]['message'];
};

/** The services' names as the Italian texts give them (each client's `label`), as an English text reads them. */
const englishServiceNames: Readonly<Record<string, string>> = {
  'di identità': 'identity',
  'di accesso': 'login',
  'di posta': 'mail',
  'feed newsletter': 'newsletter feed',
  raccomandazioni: 'recommendation',
};

/**
 * The catalogue in English, for requests whose locale is `en` (the envelope picks the text:
 * src/http/envelope.ts). The Italian texts above stay the contract's; these say the same.
 */
export const englishTexts: EnglishTexts = {
  invalid_request: 'Invalid request.',
  unknown_action: 'Unknown action.',
  metrics_not_enabled:
    'Metrics are not served on this port: set metrics.token (Authorization: Bearer) or metrics.port.',
  malformed_json: 'The request body is not valid JSON.',
  method_not_allowed: ({ allow }) => `Method not allowed: use ${allow}.`,
  payload_too_large: 'Request too large.',
  unsupported_media_type:
    'The request body must be JSON (Content-Type: application/json), uncompressed or compressed with gzip, deflate or br.',
  form_expected: 'A receipt must be a form (Content-Type: application/x-www-form-urlencoded).',
  unauthorized: 'Missing or invalid token.',
  rate_limited: ({ retryAfter }) => `Too many requests. Try again in ${retryAfter} seconds.`,
  already_sent: ({ retryAfter }) => `Code already sent. Try again in ${retryAfter} seconds.`,
  expired: 'Code expired. Request a new one.',
  invalid: 'Invalid code.',
  too_many_attempts: 'Too many attempts. Request a new code.',
  delivery_failed: 'The code could not be sent. Try again.',
  channel_not_configured: 'No delivery channel is configured for this recipient.',
  region_not_allowed: 'Text messages to this country are not allowed.',
  phone_not_mobile: 'This number is not a mobile number: enter a mobile number.',
  sms_destination_limited: ({ retryAfter }) =>
    `Too many text messages to this destination. Try again in ${retryAfter} seconds.`,
  sms_destination_blocked: 'Text messages to this number range are suspended for now.',
  challenge_required: 'A bot check is required: complete it and try again.',
  phone_taken: 'Phone number already registered to another account',
  phone_not_verified: 'Phone number not verified: first confirm the code sent to it.',
  phone_on_hold: "This number is waiting for the owner of the account's email to confirm it: sign in with the email.",
  proof_required: 'Verification required: first confirm the code you received.',
  invalid_proof: 'Invalid or expired session. Start signing in again.',
  token_required: 'Missing access token: sign in again.',
  invalid_token: 'Session expired or invalid. Sign in again.',
  invalid_credentials: 'Incorrect email or password.',
  user_not_found: 'User not found.',
  registration_refused: 'Registration failed: if you already have an account with this email, sign in.',
  upstream_error: ({ service }) =>
    `The ${englishServiceNames[service] ?? service} service is unavailable. Try again later.`,
  not_configured: ({ key }) => `Service not configured (${key}).`,
  subscription_failed: 'Newsletter subscription failed. Try again later.',
  partial_failure: 'Subscription failed for some newsletters: try again for those listed.',
  passkeys_disabled: 'Passkey sign-in is not available: sign in with a code.',
  passkey_challenge_invalid: 'Passkey request expired or already used. Try again.',
  passkey_unknown: 'This passkey is no longer valid: sign in with a code.',
  passkey_refused: 'Passkey not accepted. Try again or sign in with a code.',
  store_unavailable: 'The code store cannot be reached. Try again later.',
  internal_error: 'Internal error. Try again later.',
};

export const reasons = Object.keys(catalogue) as Reason[];

/** The parameters of a reason's text: undefined for a fixed text. */
type ParamsOf<R extends Reason> = R extends Reason
  ? (typeof catalogue)[R]['message'] extends (params: infer P) => string
    ? P
    : undefined
  : never;

/** `[params]` for a text that takes some, nothing otherwise. */
type ParamsArgs<R extends Reason> = [ParamsOf<R>] extends [undefined] ? [] : [params: ParamsOf<R>];

export interface ApiErrorOptions {
  /** Extra fields of `data`, beside `reason`. */
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Extra top-level envelope fields (for example `idp_debug`). */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

type OptionsArgs<R extends Reason> = [ParamsOf<R>] extends [undefined]
  ? [options?: ApiErrorOptions]
  : [options: ApiErrorOptions & { params: ParamsOf<R> }];

export class ApiError extends Error {
  readonly status: number;
  readonly data: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
  /** What the text was made from, so the envelope can say it in the request's language. */
  readonly params: unknown;

  /** Made by `apiError` (and `withDetails`) only: the text and the status are the catalogue's. */
  constructor(
    readonly reason: Reason,
    message: string,
    options: ApiErrorOptions & { status: number; params?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.status = options.status;
    this.params = options.params;
    this.data = options.data ?? {};
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

function textOf(reason: Reason, params: unknown): string {
  const message: Message = catalogue[reason].message;
  return typeof message === 'string' ? message : (message as (params: unknown) => string)(params);
}

/** The catalogue's text of `reason`, with its parameters: `messageOf('upstream_error', { service: 'SMS' })`. */
export const messageOf = <R extends Reason>(reason: R, ...[params]: ParamsArgs<R>): string => textOf(reason, params);

/** The catalogue's status of `reason`. */
export const statusOf = (reason: Reason): number => catalogue[reason].status;

/**
 * The one way to make an error: `apiError('already_sent', { params: { retryAfter }, data: { retry_after } })`.
 * `params` fill the text (required exactly when the reason's text takes some); the rest is the envelope's.
 */
/** 405 for a resource that takes `allow` (RFC 9110: the Allow header names the methods the resource supports). */
export const methodNotAllowed = (allow: readonly string[]): ApiError =>
  apiError('method_not_allowed', { params: { allow: allow.join(', ') }, headers: { Allow: allow.join(', ') } });

export function apiError<R extends Reason>(reason: R, ...[options]: OptionsArgs<R>): ApiError {
  const { params, ...rest } = (options ?? {}) as ApiErrorOptions & { params?: unknown };
  return made(reason, textOf(reason, params), { ...rest, params, status: catalogue[reason].status });
}

/**
 * A refusal (the caller's request turned down: a wrong code, a limit, a bad field) is an answer,
 * not a fault: its stack names only the code that refused, and no one reads it (refusals are
 * logged by reason). Capturing it through a request's async frames was 8% of a refused verify_otp
 * answer, paid on every wrong code or limit of a flood. Faults (something of ours or upstream
 * failed, whatever status the contract answers them with) keep their stack, and so does any cause.
 */
const FAULTS: ReadonlySet<Reason> = new Set<Reason>([
  'upstream_error',
  'delivery_failed',
  'subscription_failed',
  'partial_failure',
  'store_unavailable',
  'internal_error',
]);

function made(
  reason: Reason,
  message: string,
  options: ApiErrorOptions & { status: number; params?: unknown },
): ApiError {
  if (options.status >= 500 || FAULTS.has(reason)) return new ApiError(reason, message, options);
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ApiError(reason, message, options);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The same failure (reason, status, text, headers) with what the caller adds: more `data`
 * (over the original's) and envelope fields. For an action reporting a client's failure.
 */
export function withDetails(
  err: ApiError,
  details: { data?: Record<string, unknown>; extra?: Record<string, unknown> },
): ApiError {
  return made(err.reason, err.message, {
    status: err.status,
    params: err.params,
    headers: err.headers,
    data: { ...err.data, ...details.data },
    extra: { ...err.extra, ...details.extra },
    cause: err,
  });
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;

/** The text of `err` for a request in `locale`: English for `en`, the catalogue's Italian otherwise. */
export function messageIn(err: ApiError, locale: string | undefined): string {
  if (locale !== 'en') return err.message;
  const message = englishTexts[err.reason] as Message;
  return typeof message === 'string' ? message : (message as (params: unknown) => string)(err.params);
}
