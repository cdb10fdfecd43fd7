import type { EffectName, FeAction, FlowClaims, ProofField, StepId } from '../../machines';

/*
 * The format of a recorded login journey (docs/flows-http.md, "Recorded journeys"): what
 * GET /_sandbox/journeys lists and what `npm run replay -- <file.json>` (scripts/replay.ts)
 * replays against the machine. Plain JSON, secrets masked: a recording can be attached to a bug
 * report and committed as a test fixture. Types and the masking only: no runtime dependency.
 */

export const RECORDING_FORMAT = 'login-journey/1';

/** What every secret value is replaced with: codes, proofs, tokens. */
export const MASK = '***';

export interface RecordedJourney {
  format: typeof RECORDING_FORMAT;
  /** `j-<n>`: GET /_sandbox/journeys/<id> answers this journey alone. */
  id: string;
  /** A name given by whoever saved it (the fixtures: `Phone login`); the recorder gives none. */
  name?: string;
  /** The phones, emails and uids its requests named (`phone:+39...`, `email:...`, `uid:...`). */
  about: string[];
  started_at: string;
  updated_at: string;
  requests: RecordedRequest[];
}

export interface RecordedRequest {
  /** Position in the journey, from 1. */
  n: number;
  at: string;
  action: FeAction;
  /** The body the machine was given: validated, phones in E.164, secrets masked. */
  body: Record<string, unknown>;
  /**
   * What the proof the request presented vouched for, once verified: the field it came in and
   * its claims without id and expiry. Not a proof (nothing is signed): the replay resumes from it.
   */
  proof_claims?: { field: ProofField; claims: RecordedClaims };
  /** A trusted caller (x-internal-key, or `security.guard_primitives` off): no proof needed. */
  trusted?: true;
  /** The state the machine was started in (its resume point, or `refused`); absent when the request was refused before the machine ran. */
  resumed?: string;
  /** Every state the machine entered after the request's event, in order. */
  states: string[];
  /** The numbered steps passed, in order (runStep's `steps`). */
  steps: StepId[];
  effects: RecordedEffect[];
  /** The upstream calls the effects made, from the request's trace: `identity.user_search`, `sms.send`, ... */
  upstream: Array<{ call: string; status?: unknown; outcome?: unknown }>;
  answer: RecordedAnswer;
}

export type RecordedClaims = Omit<FlowClaims, 'jti' | 'exp' | 'iat' | 'journey' | 'trail'>;

export interface RecordedEffect {
  name: EffectName;
  /** Masked like the body (`verifyOtp`'s code, `ingestLogin`'s token). */
  input: unknown;
  /** `ok`: it returned `output`; `error`: it threw `error`; `pending`: it had not settled when the request ended (a timeout). */
  outcome: 'ok' | 'error' | 'pending';
  output?: unknown;
  error?: { reason?: string; message: string };
}

/** The envelope the request answered, masked: `data` of a success, `error` and `data.reason` of a refusal. */
export interface RecordedAnswer {
  status: number;
  success: boolean;
  error: string | null;
  data: Record<string, unknown>;
  /** The state the machine settled in (absent when it did not run or did not settle). */
  state?: string;
}

/** Keys whose values are secrets wherever they appear (bodies, effect inputs and outputs, answers). */
const SECRET_KEYS = new Set([
  'otp_code',
  'code',
  'proof',
  'phone_proof',
  'pending_proof',
  'register_proof',
  // A login by passkey: the ceremony's proof, and the assertion (its signature answers one challenge only, but names the passkey).
  'passkey_proof',
  'credential',
  // An enrolment's options name the person (the email or phone the browser shows) and the account's handle; its passkey, the credential.
  'options',
  'passkey',
  // The id of the login proof an enrolment binds its challenge to (the recorded claims drop it too).
  'login',
  'access_token',
  'accessToken',
  'token',
  'password',
  'secret',
]);

/**
 * A JSON copy of `value` with every secret masked. `otp` is masked only as a string (the
 * plain code `otp.debug` adds), so FeRegister's `otp: true` and the answer's `otp` metadata stay.
 */
export function maskSecrets(value: unknown, key?: string): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (key !== undefined && (SECRET_KEYS.has(key) || (key === 'otp' && typeof value === 'string'))) return MASK;
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      if (v !== undefined) out[k] = maskSecrets(v, k);
    return out;
  }
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return String(value);
  return value;
}

/** The claims a recording keeps: what the proof vouched for, without its id, chain start, expiry and the funnel's journey. */
export function recordedClaims(claims: FlowClaims): RecordedClaims {
  const { jti: _jti, exp: _exp, iat: _iat, journey: _journey, trail: _trail, ...rest } = claims;
  return maskSecrets(rest) as RecordedClaims;
}
