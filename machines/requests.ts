import { ENTRY_EVENT, PHASES, PROOF_KIND, type Entry, type Phase } from './actions';
import type { FlowClaims } from './effects';
import type { LoginFlowEvent, LoginFlowInput } from './login-flow.machine';
import type { Flow } from './steps';

/*
 * How each optimised action turns its request into the machine's input and its one event.
 * The handler:
 *   1. validates the body (zod) and normalises phones to E.164 (phone, otp_phone; an
 *      `identifier` that looks like a phone too);
 *   2. reads the proof named by `proofFieldFor(entry, body)` (machines/actions.ts), verifies it
 *      (signature, expiry, kind `PROOF_KIND[field]`: src/domain/proofs.ts verifyProof; a bad one is
 *      `invalid_proof`) and passes its claims, or `trusted: true` for an x-internal-key caller;
 *   3. `const { input, event } = flowRequest(entry, body, { claims, trusted })`;
 *   4. `runStep(machine, { input, event, trace: ctx.trace })`, which starts the machine at the
 *      request's resume point (machines/resume.ts), and shapes the envelope from `output` (see
 *      StepAnswer in run-step.ts).
 */

type Body = Record<string, unknown>;

const PROOF_FIELDS = new Set<string>(Object.keys(PROOF_KIND));
const isPhase = (value: unknown): value is Phase => (PHASES as readonly unknown[]).includes(value);

/** The machine's input and event for one request (body already validated, phones in E.164). */
export function flowRequest(
  entry: Entry,
  body: Body,
  proof: { claims?: FlowClaims | null; trusted?: boolean } = {},
): { input: LoginFlowInput; event: LoginFlowEvent } {
  const fields: Body = {};
  for (const [key, value] of Object.entries(body))
    if (value !== undefined && value !== null && !PROOF_FIELDS.has(key)) fields[key] = value;
  const input: LoginFlowInput = {
    entry,
    ...(typeof body.flow === 'string' ? { flow: body.flow as Flow } : {}),
    ...(isPhase(body.phase) ? { phase: body.phase } : {}),
    claims: proof.claims ?? null,
    trusted: proof.trusted === true,
  };
  return { input, event: { ...fields, type: ENTRY_EVENT[entry] } as LoginFlowEvent };
}
