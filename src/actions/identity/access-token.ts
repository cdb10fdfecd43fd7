import { z } from 'zod';
import { requireVerified } from '../../http/guard';
import { proofField, uidField } from './fields';
import { issueAccessToken } from './tokens';
import { defineIdentityAction } from './shared';

export const accessTokenRequest = z.object({
  uid: uidField,
  stay_logged_in: z.boolean().nullish(),
  /** Passed to the provider as the token call's JSON body. */
  body: z.record(z.string(), z.unknown()).nullish(),
  proof: proofField,
});

export const accessToken = defineIdentityAction({
  name: 'access_token',
  summary: 'Issues an access token for a uid and stores it in cookie __utp; needs a proof binding the uid.',
  request: accessTokenRequest,
  response: z.object({ access_token: z.string() }),
  reasons: ['proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    requireVerified(ctx, { uid: input.uid }, input.proof);
    const reply = await issueAccessToken(ctx, input.uid, { stayLoggedIn: input.stay_logged_in ?? true, body: input.body });
    return { data: { access_token: reply.access_token } };
  },
});
