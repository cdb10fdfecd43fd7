import { z } from 'zod';
import { issueVerifiedProof, requireVerified, spending } from '../../domain/guard';
import { proofField, uidField } from './fields';
import { issueAccessToken } from '../../domain/accounts/tokens';
import { defineAction } from '../action';

export const accessTokenRequest = z.object({
  uid: uidField,
  stay_logged_in: z.boolean().nullish(),
  /** Passed to the provider as the token call's JSON body. */
  body: z.record(z.string(), z.unknown()).nullish(),
  proof: proofField,
});

export const accessToken = defineAction({
  name: 'access_token',
  summary: 'Issues an access token for a uid and stores it in cookie __utp; needs a proof binding the uid, which it spends.',
  request: accessTokenRequest,
  response: z.object({ access_token: z.string(), proof: z.string().optional().describe('a fresh proof for the next change (the one sent is spent)') }),
  reasons: ['proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const claims = requireVerified(ctx, { uid: input.uid }, input.proof);
    const reply = await spending(ctx, claims, () => issueAccessToken(ctx, input.uid, { stayLoggedIn: input.stay_logged_in ?? true, body: input.body }));
    return { data: { access_token: reply.access_token, ...(claims ? { proof: issueVerifiedProof(ctx, {}, claims, { fresh: true }) } : {}) } };
  },
});
