import type { FlowClaims, ProofField } from './effects';
import type { Entry, LoginFlowEvent, LoginFlowInput, Phase } from './login-flow.machine';
import type { Flow } from './steps';

/*
 * How each optimised action turns its request into the machine's input and its one event.
 * The handler:
 *   1. validates the body (zod) and normalises phones to E.164 (phone, otp_phone; an
 *      `identifier` that looks like a phone too);
 *   2. reads the proof named by `proofFieldFor(entry, body)`, verifies it (signature, expiry,
 *      kind `PROOF_KIND[field]`: src/proofs verifyProof; a bad one is `invalid_proof`) and
 *      passes its claims, or `trusted: true` for an x-internal-key caller;
 *   3. `const { input, event } = flowRequest(entry, body, { claims, trusted })`;
 *   4. `runStep(machine, { input, event, trace: ctx.trace })` and shapes the envelope from
 *      `output` (see StepAnswer in run-step.ts).
 */

export const ACTION_ENTRY = {
  FeLogin: 'login',
  FeVerifyOtp: 'verifyOtp',
  FeRegister: 'register',
  FeAddPhone: 'addPhone',
  FeUpdateProfile: 'updateProfile',
} as const satisfies Record<string, Entry>;

/** The proof kind each request field must carry. */
export const PROOF_KIND: Record<ProofField, string> = {
  phone_proof: 'phone',
  pending_proof: 'pending',
  register_proof: 'register',
  proof: 'verified',
};

type Body = Record<string, unknown>;

/** The request field whose proof resumes the journey, or null when the action needs none. */
export function proofFieldFor(entry: Entry, body: Body): ProofField | null {
  switch (entry) {
    case 'login':
      return null;
    case 'verifyOtp':
      return 'pending_proof';
    case 'register':
      if (body.phase === 'email_otp') return 'phone_proof';
      if (body.phase === 'register') return 'register_proof';
      return body.register_proof ? 'register_proof' : 'phone_proof';
    case 'addPhone':
    case 'updateProfile':
      return 'proof';
  }
}

/** The one event each action sends. */
export const ENTRY_EVENT: Record<Entry, LoginFlowEvent['type']> = {
  login: 'LOGIN',
  verifyOtp: 'VERIFY_OTP',
  register: 'REGISTER',
  addPhone: 'ADD_PHONE',
  updateProfile: 'UPDATE_PROFILE',
};
const PROOF_FIELDS = new Set<string>(['phone_proof', 'pending_proof', 'register_proof', 'proof']);

/** The machine's input and event for one request (body already validated, phones in E.164). */
export function flowRequest(entry: Entry, body: Body, proof: { claims?: FlowClaims | null; trusted?: boolean } = {}): { input: LoginFlowInput; event: LoginFlowEvent } {
  const fields: Body = {};
  for (const [key, value] of Object.entries(body)) if (value !== undefined && value !== null && !PROOF_FIELDS.has(key)) fields[key] = value;
  const input: LoginFlowInput = {
    entry,
    ...(typeof body.flow === 'string' ? { flow: body.flow as Flow } : {}),
    ...(body.phase === 'email_otp' || body.phase === 'register' ? { phase: body.phase as Phase } : {}),
    claims: proof.claims ?? null,
    trusted: proof.trusted === true,
  };
  return { input, event: { ...fields, type: ENTRY_EVENT[entry] } as LoginFlowEvent };
}
