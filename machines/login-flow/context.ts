import type { ACTIONS, Entry, Phase } from '../actions';
import type {
  EnrolPasskeyOutput,
  FlowClaims,
  OtpSendMetadata,
  PasskeyEnrolOptionsOutput,
  ProfileFields,
  ProofField,
} from '../effects';
import { STEP, type Flow, type ProfileStep } from '../steps';
import type { AdmissionRefusal, FlowFailure } from './refusals';

/*
 * What a login journey request carries and what the machine keeps (machines/login-flow.machine.ts):
 * the input, the user events, the context, and the rule that admits a request's identifiers
 * (`admit`). Plain data and pure functions, shared by the machine and the code step.
 */

export type { Entry } from '../actions';

export interface LoginFlowInput {
  /** The optimised action serving the request. */
  entry: Entry;
  /** The request's `flow` (FeVerifyOtp, FeAddPhone). */
  flow?: Flow;
  /** FeRegister's `phase`. */
  phase?: Phase;
  /** Claims of the proof the request carried, already verified (signature, expiry) by the caller. */
  claims?: FlowClaims | null;
  /** The caller needs no proof: `x-internal-key`, or `security.guard_primitives` off. */
  trusted?: boolean;
}

interface LoginEvent {
  type: typeof ACTIONS.FeLogin.event;
  /** E.164 phone or email. */
  identifier: string;
  /** `password` asks for the password path (email only). */
  method?: 'otp' | 'password';
}
interface VerifyOtpEvent {
  type: typeof ACTIONS.FeVerifyOtp.event;
  /** Absent only when declining the phone on file (flow `email_phone_declined`). */
  otp_code?: string;
  flow?: Flow;
  phone?: string;
  email?: string;
  uid?: string;
  stay_logged_in?: boolean;
}
interface RegisterEvent {
  type: typeof ACTIONS.FeRegister.event;
  phase?: Phase;
  email?: string;
  phone?: string;
  consents?: Record<string, unknown>;
  otp?: boolean;
  is_magic_link_sent?: boolean;
  first_name?: string;
  last_name?: string;
  birth_date?: string;
  city?: string;
}
interface AddPhoneEvent {
  type: typeof ACTIONS.FeAddPhone.event;
  /** The phone to add, E.164. */
  phone: string;
  uid?: string;
  email?: string;
  flow?: Flow;
}
interface UpdateProfileEvent {
  type: typeof ACTIONS.FeUpdateProfile.event;
  uid: string;
  first_name?: string;
  last_name?: string;
  birth_date?: string;
  city?: string;
  /** E.164. */
  otp_phone?: string;
  email?: string;
  stay_logged_in?: boolean;
}
interface PasskeyLoginEvent {
  type: typeof ACTIONS.PasskeyLogin.event;
  /** The `passkey_proof` of PasskeyLoginOptions: the challenge the assertion answers. */
  passkey_proof: string;
  credential: unknown;
  stay_logged_in?: boolean;
}
interface PasskeyEnrolOptionsEvent {
  type: typeof ACTIONS.PasskeyEnrolOptions.event;
}
interface PasskeyEnrolEvent {
  type: typeof ACTIONS.PasskeyEnrol.event;
  /** The `passkey_proof` of PasskeyEnrolOptions: the challenge the new credential answers. */
  passkey_proof: string;
  credential: unknown;
  name: string;
}
export type LoginFlowEvent =
  | LoginEvent
  | VerifyOtpEvent
  | RegisterEvent
  | AddPhoneEvent
  | UpdateProfileEvent
  | PasskeyLoginEvent
  | PasskeyEnrolOptionsEvent
  | PasskeyEnrolEvent;

export interface LoginFlowContext {
  entry: Entry;
  trusted: boolean;
  claims: FlowClaims | null;
  flow: Flow | null;
  phase: Phase | null;
  /** The request being served (its event); null until it arrives. */
  request: LoginFlowEvent | null;
  uid?: string;
  email?: string;
  phone?: string;
  /** The account found by email says its email was never confirmed: it is claimed before anything else. */
  emailUnconfirmed?: boolean;
  /** `phone` is not on file but held for the account since a claim dropped it (step 65 offers it back). */
  phoneHeld?: boolean;
  /** A verified phone to save as `otp_phone` (step 42). */
  pendingPhone?: string;
  stayLoggedIn: boolean;
  /** Set by a login by passkey: the account proved itself, no code (the token, the ingest and the proof say so). */
  method?: 'passkey';
  otp?: OtpSendMetadata;
  /** What an enrolment's effect answered, which its action answers as it is (the options, or the passkey kept). */
  ceremony?: PasskeyEnrolOptionsOutput | EnrolPasskeyOutput;
  accessToken?: string;
  expiresIn?: number | null;
  failure?: FlowFailure;
}

/** State meta: the proof the answer hands out when the request settles there (its kind is `PROOF_KIND[field]`). */
export interface LoginFlowStateMeta {
  proof?: { field: ProofField; carries: Array<'uid' | 'email' | 'phone'> };
  /** The answer names the phone the code went to (masked): the user did not type it. */
  showsPhone?: true;
}

export type Identifier = 'uid' | 'email' | 'phone';
export interface AdmitParams {
  /** Identifiers the request must end up naming (`code`: the event's otp_code; `account`: uid or email). */
  needs: Array<Identifier | 'code' | 'account'>;
  /** Identifiers this state adopts from the event because it is about to verify them by code. */
  takes?: Identifier[];
}

const IDENTIFIERS_OF: Record<LoginFlowEvent['type'], Identifier[]> = {
  LOGIN: [],
  VERIFY_OTP: ['uid', 'email', 'phone'],
  REGISTER: ['email', 'phone'],
  // ADD_PHONE's `phone` is the new phone, not an identifier of the account.
  ADD_PHONE: ['uid', 'email'],
  UPDATE_PROFILE: ['uid', 'email'],
  // The passkey names its account; the request names none.
  PASSKEY_LOGIN: [],
  // An enrolment acts on the account of the login proof alone: its requests name none.
  PASSKEY_ENROL_OPTIONS: [],
  PASSKEY_ENROL: [],
};

const sameValue = (key: Identifier, a: string, b: string) =>
  key === 'email' ? a.toLowerCase() === b.toLowerCase() : a === b;
export const present = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

interface Admission {
  ok: boolean;
  reason?: AdmissionRefusal;
  field?: string;
  ids: Partial<Record<Identifier, string>>;
}

/**
 * Whether the request may act here, and on whom. An identifier the request names must match
 * what the proof (or an earlier step) vouched for; a mismatch means a proof from another
 * user's flow (`invalid_proof`). Missing identifiers are `invalid_request`.
 */
export function admit(context: LoginFlowContext, event: LoginFlowEvent, params: AdmitParams): Admission {
  const ids: Partial<Record<Identifier, string>> = { uid: context.uid, email: context.email, phone: context.phone };
  for (const key of IDENTIFIERS_OF[event.type]) {
    const given = (event as unknown as Record<string, unknown>)[key];
    if (!present(given)) continue;
    const known = ids[key];
    if (known !== undefined && !context.trusted) {
      if (!sameValue(key, known, given)) return { ok: false, reason: 'invalid_proof', field: key, ids };
    } else if (context.trusted || params.takes?.includes(key)) {
      ids[key] = key === 'email' ? given.trim().toLowerCase() : given.trim();
    }
  }
  for (const need of params.needs) {
    if (need === 'code' && !(event.type === 'VERIFY_OTP' && present(event.otp_code)))
      return { ok: false, reason: 'invalid_request', field: 'otp_code', ids };
    if (need === 'account' && !ids.uid && !ids.email)
      return { ok: false, reason: 'invalid_request', field: 'uid', ids };
    if ((need === 'uid' || need === 'email' || need === 'phone') && !ids[need])
      return { ok: false, reason: 'invalid_request', field: need, ids };
  }
  return { ok: true, ids };
}

/** The initial context of a request: who calls, with which proof, on which flow. */
export function initialContext(input: LoginFlowInput): LoginFlowContext {
  return {
    entry: input.entry,
    trusted: input.trusted === true,
    claims: input.claims ?? null,
    flow: input.flow ?? (input.claims?.flow as Flow | undefined) ?? null,
    phase: input.phase ?? null,
    request: null,
    stayLoggedIn: true,
  };
}

/** The identifiers of a proof that resumed the journey: what the request may act on. */
export function proofIdentifiers(claims: FlowClaims | null): Partial<Record<Identifier, string>> {
  if (!claims) return {};
  return {
    ...(claims.uid ? { uid: claims.uid } : {}),
    ...(claims.email ? { email: claims.email.toLowerCase() } : {}),
    ...(claims.phone ? { phone: claims.phone } : {}),
  };
}

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const E164 = /^\+[1-9]\d{5,14}$/;
/** Dynamic params of a guard or action after an effect: its output, typed by the actor `setup()` declares for it. */
export const output = <T>({ event }: { event: { output: T } }): T => event.output;
export const requestOf = <T extends LoginFlowEvent['type']>(context: LoginFlowContext, type: T) =>
  (context.request?.type === type ? context.request : undefined) as Extract<LoginFlowEvent, { type: T }> | undefined;

/** Fields of step 40 (identity) and step 42 (custom) the request asks to save. */
export function profileFields(context: LoginFlowContext, step: ProfileStep): ProfileFields {
  const request = context.request;
  const form = request?.type === 'REGISTER' || request?.type === 'UPDATE_PROFILE' ? request : undefined;
  const pick = (source: Record<string, unknown> | undefined, keys: Array<keyof ProfileFields>): ProfileFields => {
    const fields: ProfileFields = {};
    for (const key of keys) if (source && present(source[key])) fields[key] = (source[key] as string).trim();
    return fields;
  };
  if (step === STEP.identitySaved) {
    const fields = pick(form as Record<string, unknown> | undefined, ['first_name', 'last_name']);
    // Only a trusted caller changes the email: with a proof, the request's email must be the proof's (admit), so nothing changes.
    if (form?.type === 'UPDATE_PROFILE' && context.trusted && present(form.email)) fields.email = form.email.trim();
    return fields;
  }
  const fields = pick(form as Record<string, unknown> | undefined, ['city', 'birth_date']);
  if (context.pendingPhone) fields.otp_phone = context.pendingPhone;
  return fields;
}
export const hasFields = (fields: ProfileFields) => Object.keys(fields).length > 0;
/** Who asks whether a phone is free: the account acted on (its uid, else its email). */
export const accountOf = (context: LoginFlowContext): string | undefined => context.uid ?? context.email;
