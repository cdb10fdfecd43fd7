import { z } from 'zod';
import { codeVerified, proofRequired, requireVerified } from '../../http/guard';
import { proofField, uidField } from './fields';
import { defineIdentityAction } from './shared';

export const doiConfirmRequest = z.object({ uid: uidField, proof: proofField });

/**
 * Sets the DOI email state to confirmed. Confirming an email is vouching for it: the proof must
 * bind the uid and come from a code verified for the email itself (not a phone, not a password).
 */
export const doiConfirm = defineIdentityAction({
  name: 'doi_confirm',
  summary: 'Sets the double opt-in email state to CONFIRMED; needs a proof of the verified email binding the uid.',
  request: doiConfirmRequest,
  response: z.object({ confirmed: z.literal(true), uid: z.string(), result: z.unknown().describe('the provider reply, passed through') }),
  reasons: ['proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const claims = requireVerified(ctx, { uid: input.uid }, input.proof);
    if (claims && !codeVerified(claims, 'email')) throw proofRequired();
    const result = await ctx.deps.identity.confirmDoi(input.uid);
    return { data: { confirmed: true, uid: input.uid, result: result ?? null } };
  },
});
