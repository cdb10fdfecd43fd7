import { z } from 'zod';
import { FLOWS, STEP, type FlowFailure, type FlowFailureReason, type StepAnswer, type StepId } from '../../machines';
import { otpSendResponse } from '../domain/otp/send-result';
import { apiError, type ApiError, type Reason } from '../core/errors';
import { signProof } from '../domain/proofs';
import { phoneHint } from '../domain/phone';
import type { ServiceContext } from '../domain/deps';
import type { FunnelLineage } from '../domain/funnel/counting';

/*
 * The envelope of an optimised action, read from the state the login machine settled on
 * (machines/run-step.ts StepAnswer): `data` of a success, or the ApiError of a refusal.
 */

const STEP_IDS = Object.values(STEP) as [StepId, ...StepId[]];

/**
 * One of the contract's steps (machines/steps.ts). The document states them as one `enum`
 * (zod-to-openapi keeps only the first value of a literal with several), so the typed client
 * reads `next_step` as their union.
 */
const nextStep = z.literal(STEP_IDS).meta({
  type: ['integer', 'string'],
  enum: STEP_IDS,
  description: "the step the frontend shows next, one of the contract's (docs/contract.md#steps; docs/flows.md)",
});

/** Every field an optimised action may answer in `data`; each action's OpenAPI response picks its own. */
export const flowAnswerShape = z.object({
  next_step: nextStep,
  flow: z.enum(FLOWS).nullable().describe('send it back as `flow` in the next request'),
  screen: z
    .enum(['otp_phone', 'success'])
    .optional()
    .describe('only where the contract names one: otp_phone at 62, success at 90'),
  done: z.literal(true).optional().describe('present at 90: the journey is complete'),
  uid: z.string().optional().describe('the account acted on, once known (send it to FeAddPhone / FeUpdateProfile)'),
  phone_hint: z
    .string()
    .optional()
    .describe('at 65 when the code went to the phone on file: that phone, masked (`+39 *******567`)'),
  otp: otpSendResponse
    .optional()
    .describe('send metadata of the code this request sent; `otp.otp` only when otp.debug is on'),
  access_token: z.string().optional().describe('when this request issued a token (also set as cookie __utp)'),
  phone_proof: z.string().optional().describe('at 24: send it as `phone_proof` to FeRegister phase email_otp'),
  pending_proof: z.string().optional().describe('at 23, 62 and 65: send it as `pending_proof` to FeVerifyOtp'),
  register_proof: z
    .string()
    .optional()
    .describe('at 25 and 37: send it as `register_proof` to FeRegister phase register'),
  proof: z
    .string()
    .optional()
    .describe(
      'at 61 and 90: send it as `proof` to FeAddPhone / FeUpdateProfile (a `verified` proof, also accepted by the identity primitives)',
    ),
});
export type FlowAnswerData = z.infer<typeof flowAnswerShape>;

/**
 * How the next proof relates to the one the request presented: `continues` keeps its id and
 * its expiry (nothing changed: a spent id stays spent for as long as any proof carrying it
 * lives); `expires` keeps only its expiry (a change spent it: new id, but no code was verified,
 * so the chain still ends when its last code's proof would have).
 */
export interface NextProofLineage {
  continues?: { jti: string; exp: number };
  expires?: number;
  /** Start of the chain, kept by both (email-claim.ts voids chains older than a claim). */
  iat?: number;
  /** The funnel's journey and its trail to the screen this answer shows. */
  funnel?: FunnelLineage;
}

/** `data` of a settled, accepted request; signs the next proof and sets `__utp` when a token was issued. */
export function answerData(
  answer: StepAnswer,
  ctx: Pick<ServiceContext, 'deps'>,
  lineage: NextProofLineage = {},
): FlowAnswerData {
  const { deps } = ctx;
  const data: FlowAnswerData = { next_step: answer.nextStep!, flow: answer.flow };
  if (answer.screen) data.screen = answer.screen as FlowAnswerData['screen'];
  if (answer.done) data.done = true;
  if (answer.uid) data.uid = answer.uid;
  if (answer.phoneOnFile) data.phone_hint = phoneHint(answer.phoneOnFile);
  if (answer.otp) data.otp = answer.otp;
  // Its cookie was set with the token (issueToken effect, domain/accounts/tokens.ts).
  if (answer.accessToken) data.access_token = answer.accessToken;
  if (answer.proof) {
    const now = deps.now();
    const expires = lineage.continues?.exp ?? lineage.expires;
    const ttl =
      expires !== undefined ? Math.max(1, expires - Math.floor(now / 1000)) : deps.config.security.proof_ttl_seconds;
    const chain = {
      ...(lineage.continues ? { jti: lineage.continues.jti } : {}),
      ...(lineage.iat !== undefined ? { iat: lineage.iat } : {}),
    };
    // `shown`: when this screen was shown, so the request that acts on it can tell the time spent there (src/domain/funnel/counting.ts).
    data[answer.proof.field] = signProof(
      deps.proofKey,
      { ...answer.proof.claims, ...chain, ...lineage.funnel, shown: now },
      ttl,
      now,
    );
  }
  return data;
}

const FIELD_MESSAGE: Record<string, string> = {
  identifier: 'neither an email nor a phone number',
  otp_code: 'is required',
};

// Every reason the machine refuses with is one of the catalogue's (src/core/errors.ts): no table maps one to the other.
const _failureReasonsAreReasons: Reason = '' as FlowFailureReason;

/** What a refusal adds to `data`: the same as the primitive actions' (domain/otp/errors.ts, domain/proofs.ts). */
function failureData(reason: FlowFailureReason, field: string | undefined): Record<string, unknown> | undefined {
  switch (reason) {
    case 'invalid':
    case 'expired':
    case 'too_many_attempts':
      return { valid: false };
    case 'invalid_proof':
      // `field`: the request names an identifier the proof does not bind (another user's proof).
      return field ? { why: 'mismatch', field } : { why: 'step' };
    case 'phone_not_verified':
      return { issues: [{ path: field ?? 'otp_phone', message: 'not the phone verified in this journey' }] };
    case 'invalid_request':
      return {
        issues: [{ path: field ?? '', message: (field && FIELD_MESSAGE[field]) ?? 'is required at this step' }],
      };
    case 'phone_taken':
    case 'phone_on_hold':
    case 'proof_required':
      return undefined;
  }
}

/** The ApiError a refused request answers: the machine's reason, with the catalogue's text and status. */
export function failureError(failure: FlowFailure): ApiError {
  const field = typeof failure.data?.field === 'string' ? failure.data.field : undefined;
  return apiError(failure.reason, { data: failureData(failure.reason, field) });
}
