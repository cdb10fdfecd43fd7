import { z } from 'zod';
import { codeVerified, issueVerifiedProof, proofRequired, requireVerified, spending } from '../../domain/guard';
import { proofField, uidField } from './fields';
import { defineAction } from '../action';

const doiConfirmRequest = z.object({ uid: uidField, proof: proofField });

/**
 * Sets the DOI email state to confirmed. Confirming an email is vouching for it: the proof must
 * bind the uid and come from a code delivered to the email itself (not a phone, not a
 * password); a proof names only identifiers of one account, so that email is the uid's. The
 * proof is spent; the answer carries a fresh one.
 */
export const doiConfirm = defineAction({
  name: 'doi_confirm',
  summary: 'Sets the double opt-in email state to CONFIRMED; needs a proof of the verified email binding the uid.',
  request: doiConfirmRequest,
  response: z.object({
    confirmed: z.literal(true),
    uid: z.string(),
    result: z.unknown().describe('the provider reply, passed through'),
    proof: z.string().optional().describe('a fresh proof for the next change (the one sent is spent)'),
  }),
  reasons: ['proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const claims = requireVerified(ctx, { uid: input.uid }, input.proof);
    if (claims && !codeVerified(claims, 'email')) throw proofRequired();
    const result = await spending(ctx, claims, () => ctx.deps.identity.confirmDoi(ctx, input.uid));
    return {
      data: {
        confirmed: true,
        uid: input.uid,
        result: result ?? null,
        ...(claims ? { proof: issueVerifiedProof(ctx, {}, claims, { fresh: true }) } : {}),
      },
    };
  },
});
