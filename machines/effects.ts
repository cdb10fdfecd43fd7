/*
 * The effects of the login flows: the input and output of every named actor the machines
 * invoke, so src/ can implement them against the OTP service and the identity client without
 * reading the machines. Types, and the list of their names.
 *
 * Conventions:
 * - Phones are E.164 (`+393331234567`) both ways: the handler normalises what the user typed
 *   before it becomes an event, and implementations normalise the provider's stored digits.
 * - Outcomes the flow branches on are typed outputs (a wrong code, a phone held by someone,
 *   a user not found). Anything else is thrown (an ApiError: `already_sent` or
 *   `channel_not_configured` from the OTP service, `upstream_error` from a client): the machine
 *   does not catch it, `runStep` rejects with that same error and the envelope says what it
 *   would say for the primitive action. The one exception is `ingestLogin`, whose failure
 *   never fails a login.
 * - Every effect receives an AbortSignal, aborted when the request gives up on it (timeout).
 */

import type { Flow, ProfileStep } from './steps';

/** otp_generate's success data (docs/contract.md#one-time-codes); `otp` only when `otp.debug`. Passed to the answer as `otp`. */
export interface OtpSendMetadata {
  otp?: string;
  resent: boolean;
  retry_after: number;
  cooldown: number;
  expires_in: number;
  /** `channel`: how the phone got it (`sms`, `whatsapp`), when it did. */
  notified: { email: boolean; sms: boolean; channel?: 'sms' | 'whatsapp' };
}

/** The OTP service's generate: `key` is the OTP key; a phone gets an SMS, an email a mail. */
export interface SendOtpInput {
  key: string;
  phone?: string;
  email?: string;
}
export type SendOtpOutput = OtpSendMetadata;

/**
 * The OTP service's verify of one attempt; `ok` consumed the code and it was delivered to `key`
 * (a phone or an email): a code sent elsewhere under this key answers `invalid`.
 */
export interface VerifyOtpInput {
  key: string;
  code: string;
}
type OtpVerifyOutcome = 'ok' | 'invalid' | 'expired' | 'too_many_attempts';
export type VerifyOtpOutput = OtpVerifyOutcome;

/** An account as the flows need it. `phone` is the `otp_phone` on file, in E.164. */
interface FlowUser {
  uid: string;
  email?: string;
  phone?: string;
  /** The provider says the email's double opt-in was never confirmed (lookup by email only). */
  emailUnconfirmed?: true;
  /**
   * `phone` is not on file: a claim dropped it and holds it for the account until the email's
   * owner proves or declines it (lookup by email only).
   */
  phoneHeld?: true;
}
/** `onHold`: no account holds the phone, but it is held for one whose email's owner has not decided yet (search by phone only). */
export type UserLookupOutput = ({ found: true } & FlowUser) | { found: false; onHold?: true };

/** v3 user search on custom field `otp_phone`: the account that really holds the phone, if any. */
export interface SearchUserByPhoneInput {
  phone: string;
  /**
   * The account (uid, else email) asking whether the phone is free for it: such an answer tells
   * whether another account holds the phone, so implementations count it against the lookup
   * limits. Absent when the search logs the phone's holder in. A phone held for an account
   * (ClaimAccountInput) is that account's: another account asking hears it is taken, a login
   * hears `onHold`.
   */
  account?: string;
}
export type SearchUserByPhoneOutput = UserLookupOutput;

/** identity users/get by email, then the profile read for the custom fields (`get_user_email`). */
export interface LookupUserByEmailInput {
  email: string;
}
export type LookupUserByEmailOutput = UserLookupOutput;

/**
 * Claims the account of an email just proven by code whose double opt-in was never confirmed:
 * proofs issued before void, the phone on file (E.164) dropped, read back gone and held for the
 * account, the email confirmed. Answers the phone held, if there was one. A provider that keeps
 * the phone is an `upstream_error`, thrown.
 */
export interface ClaimAccountInput {
  uid: string;
  phone?: string;
}
export interface ClaimAccountOutput {
  heldPhone: string | null;
}

/** Ends the hold on the phone a claim dropped: its owner said it is not theirs. */
export interface ReleasePhoneInput {
  uid: string;
}
export type ReleasePhoneOutput = void;

/** Passwordless registration (the identity register call). */
export interface RegisterUserInput {
  email: string;
  consents?: Record<string, unknown>;
  is_magic_link_sent?: boolean;
}
/** The new account's uid (the token the provider may return is not used: step 90 issues one). */
export interface RegisterUserOutput {
  uid: string;
}

/** DOI email state CONFIRMED for the uid. The provider's reply is not used by the flow. */
export interface ConfirmDoiInput {
  uid: string;
}
export type ConfirmDoiOutput = unknown;

/**
 * One profile update. Step 40 (`STEP.identitySaved`) carries identity fields only (first_name,
 * last_name, email: the form-urlencoded provider call), step 42 (`STEP.customFieldsSaved`)
 * custom fields only (city, birth_date, otp_phone: the JSON call; otp_phone in E.164, stored as
 * digits). The machine has already checked that `otp_phone` is free (searchUserByPhone); an
 * implementation that checks again answers `phone_taken` instead of throwing.
 */
export interface UpdateProfileInput {
  uid: string;
  step: ProfileStep;
  fields: ProfileFields;
}
export interface ProfileFields {
  first_name?: string;
  last_name?: string;
  email?: string;
  city?: string;
  birth_date?: string;
  otp_phone?: string;
}
export type UpdateProfileOutput = { outcome: 'saved' } | { outcome: 'phone_taken' };

/** Publisher token for the uid; the handler sets cookie `__utp` from the answer's `accessToken`. */
export interface IssueTokenInput {
  uid: string;
  stay_logged_in: boolean;
  /** Only for a login by passkey: what the login metric counts it as (a code login names none). */
  method?: 'passkey';
}
export interface IssueTokenOutput {
  access_token: string;
  expires_in?: number | null;
}

/**
 * Queue `{uid, accessToken}` for the user collector. Must return at once (the login never
 * waits on the collector) and should never throw; if it does, the login completes anyway.
 */
export interface IngestLoginInput {
  uid: string;
  accessToken: string;
  /** Only for a login by passkey: the collector's post names it (a code login's post is unchanged). */
  method?: 'passkey';
}
type IngestLoginOutput = void;

/**
 * PasskeyLogin's assertion (docs/passkeys.md), verified by the WebAuthn library against the
 * challenge its `passkey_proof` names, which it spends: answers the account of the passkey.
 * Every refusal (`passkey_challenge_invalid`, `passkey_unknown`, `passkey_refused`) is thrown,
 * as the action answers it; the machine only goes on with an account.
 */
export interface VerifyPasskeyInput {
  passkey_proof: string;
  /** The assertion, as `startAuthentication` of @simplewebauthn/browser returns it (validated by the action). */
  credential: unknown;
}
export interface VerifyPasskeyOutput {
  uid: string;
}

/**
 * PasskeyEnrolOptions (docs/passkeys.md): the registration options for the account the login
 * proof of 90 names, and the `passkey_proof` binding their challenge to that account and that
 * proof. What the browser shows beside the passkey is read from the proof's email or phone.
 */
export interface PasskeyEnrolOptionsInput {
  uid: string;
  /** The id (`jti`) of the login proof of 90: PasskeyEnrol must present the same one. */
  login: string;
  email?: string;
  phone?: string;
}
export interface PasskeyEnrolOptionsOutput {
  /** PublicKeyCredentialCreationOptions, handed to @simplewebauthn/browser as they are. */
  options: Record<string, unknown>;
  passkey_proof: string;
}

/**
 * PasskeyEnrol: the new credential verified against the challenge its `passkey_proof` names
 * (spent), for the same account and login proof, and kept. Every refusal
 * (`passkey_challenge_invalid`, `passkey_refused`) is thrown, as the action answers it.
 */
export interface EnrolPasskeyInput {
  uid: string;
  /** The id (`jti`) of the login proof presented. */
  login: string;
  passkey_proof: string;
  /** The credential, as `startRegistration` of @simplewebauthn/browser returns it (validated by the action). */
  credential: unknown;
  /** What the person calls the passkey. */
  name: string;
}
export interface EnrolPasskeyOutput {
  /** The passkey as its owner sees it (src/actions/passkeys/fields.ts passkeyView). */
  passkey: Record<string, unknown>;
}

/** Every effect as a plain async function: what src/ implements (see `provideEffects`). */
export interface FlowEffects {
  sendOtp(input: SendOtpInput, signal: AbortSignal): Promise<SendOtpOutput>;
  verifyOtp(input: VerifyOtpInput, signal: AbortSignal): Promise<VerifyOtpOutput>;
  searchUserByPhone(input: SearchUserByPhoneInput, signal: AbortSignal): Promise<SearchUserByPhoneOutput>;
  lookupUserByEmail(input: LookupUserByEmailInput, signal: AbortSignal): Promise<LookupUserByEmailOutput>;
  claimAccount(input: ClaimAccountInput, signal: AbortSignal): Promise<ClaimAccountOutput>;
  releasePhone(input: ReleasePhoneInput, signal: AbortSignal): Promise<ReleasePhoneOutput>;
  registerUser(input: RegisterUserInput, signal: AbortSignal): Promise<RegisterUserOutput>;
  confirmDoi(input: ConfirmDoiInput, signal: AbortSignal): Promise<ConfirmDoiOutput>;
  updateProfile(input: UpdateProfileInput, signal: AbortSignal): Promise<UpdateProfileOutput>;
  issueToken(input: IssueTokenInput, signal: AbortSignal): Promise<IssueTokenOutput>;
  ingestLogin(input: IngestLoginInput, signal: AbortSignal): Promise<IngestLoginOutput>;
  verifyPasskey(input: VerifyPasskeyInput, signal: AbortSignal): Promise<VerifyPasskeyOutput>;
  passkeyEnrolOptions(input: PasskeyEnrolOptionsInput, signal: AbortSignal): Promise<PasskeyEnrolOptionsOutput>;
  enrolPasskey(input: EnrolPasskeyInput, signal: AbortSignal): Promise<EnrolPasskeyOutput>;
}
export type EffectName = keyof FlowEffects;

/** Every effect by name, for code that serves or replays them all (src/flows, scripts/replay.ts). */
export const EFFECT_NAMES = [
  'sendOtp',
  'verifyOtp',
  'searchUserByPhone',
  'lookupUserByEmail',
  'claimAccount',
  'releasePhone',
  'registerUser',
  'confirmDoi',
  'updateProfile',
  'issueToken',
  'ingestLogin',
  'verifyPasskey',
  'passkeyEnrolOptions',
  'enrolPasskey',
] as const satisfies ReadonlyArray<EffectName>;
// Fails to compile when an effect of FlowEffects is missing above.
const _everyEffectNamed: Exclude<EffectName, (typeof EFFECT_NAMES)[number]> extends never ? true : never = true;

/** Claims of a proof the handler verified (signature, expiry) before restoring the machine. */
export interface FlowClaims {
  kind: string;
  flow?: string;
  step?: string | number;
  uid?: string;
  email?: string;
  phone?: string;
  /** Identifiers no code was verified for in this journey (only on `verified` proofs). */
  linked?: string[];
  /** The proof's id: spent when the request it authorises changes something (docs/security.md). */
  jti?: string;
  /** Expiry, seconds since the epoch. */
  exp?: number;
  /** When the answer that handed out this proof was given (ms since the epoch): the time on its screen starts there. */
  shown?: number;
  /** Start of the proof's chain, ms since the epoch. */
  iat?: number;
  /** The funnel's anonymous journey id (src/), and the screens the journey went through to this proof's: the machine reads neither. */
  journey?: string;
  trail?: string;
  /** How a `verified` proof's login was made, where not by a code: `passkey` (docs/passkeys.md). */
  method?: string;
}

/** Which request field carries a proof, and which the answer hands out. */
export type ProofField = 'phone_proof' | 'pending_proof' | 'register_proof' | 'proof';

/** The proof an answer hands out: the handler signs `claims` (adding the expiry) into `field`. */
export interface NextProof {
  field: ProofField;
  claims: FlowClaims & { kind: string; flow: Flow | undefined; step: number | string };
}
