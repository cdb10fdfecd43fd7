import type { VerifyOtpOutput } from '../effects';

/*
 * Why the login machine refuses a request (`data.reason` of the envelope), written where each
 * kind of refusal is made; `FlowFailureReason` is their union, not a list of its own. Every one
 * is a reason of the service's error catalogue (src/core/errors.ts): machines/ may not import
 * src/, so the check stands on the side that sees both, src/flows/answer.ts (at compile time)
 * and test/machines/refusals.test.ts (the catalogue has each; the machine makes each).
 */

/** A code that did not pass (`refuseCode`): every outcome of a code check but `ok`. */
export type CodeRefusal = Exclude<VerifyOtpOutput, 'ok'>;
const CODE: Record<CodeRefusal, true> = { invalid: true, expired: true, too_many_attempts: true };
export const CODE_REFUSALS = Object.keys(CODE) as CodeRefusal[];

/** A request the state does not admit (`refuseRequest`, `admit`): an identifier the proof does not bind, or one the state needs missing. */
export const ADMISSION_REFUSALS = ['invalid_proof', 'invalid_request'] as const;
export type AdmissionRefusal = (typeof ADMISSION_REFUSALS)[number];

/** A request that resumes at no state (machines/resume.ts): a proof of another step, or none. */
export const RESUME_REFUSALS = ['invalid_proof', 'proof_required'] as const;
export type ResumeRefusal = (typeof RESUME_REFUSALS)[number];

/**
 * What a state refuses with by name (`refuse(...)`): a phone another account holds, a phone held
 * for an account while its email's owner decides, a profile phone not verified, an identifier that is neither.
 */
export const NAMED_REFUSALS = ['phone_taken', 'phone_on_hold', 'phone_not_verified', 'invalid_request'] as const;
export type NamedRefusal = (typeof NAMED_REFUSALS)[number];

/** Why a request was refused: `data.reason` of the envelope. */
export type FlowFailureReason = CodeRefusal | AdmissionRefusal | ResumeRefusal | NamedRefusal;
export const FLOW_FAILURE_REASONS: readonly FlowFailureReason[] = [
  ...new Set([...CODE_REFUSALS, ...ADMISSION_REFUSALS, ...RESUME_REFUSALS, ...NAMED_REFUSALS]),
];

export interface FlowFailure {
  reason: FlowFailureReason;
  data?: Record<string, unknown>;
}
