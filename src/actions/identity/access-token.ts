import { z } from 'zod';
import { issueVerifiedProof, requireVerified, spending, trustedCaller } from '../../domain/guard';
import { invalidField } from '../../domain/otp/errors';
import { proofField, uidField } from './fields';
import { issueAccessToken } from '../../domain/accounts/tokens';
import { defineAction } from '../action';

const accessTokenRequest = z.object({
  uid: uidField,
  stay_logged_in: z.boolean().nullish(),
  /**
   * Passed to the provider as the token call's JSON body, for a trusted caller only: the contract
   * names none of its fields, and a field the provider reads (a uid, a lifetime, a scope) must
   * not come from whoever holds a proof.
   */
  body: z
    .record(z.string(), z.unknown())
    .nullish()
    .describe('JSON body of the provider token call; only with x-internal-key (otherwise omit it or send null or {})'),
  proof: proofField,
});

export const accessToken = defineAction({
  name: 'access_token',
  rules: ['`body` only with a right `x-internal-key`: a non-empty body from any other caller is refused'],
  summary:
    'Issues an access token for a uid and stores it in cookie __utp; needs a proof binding the uid, which it spends.',
  request: accessTokenRequest,
  response: z.object({
    access_token: z.string(),
    proof: z.string().optional().describe('a fresh proof for the next change (the one sent is spent)'),
  }),
  reasons: ['proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const forwarded = input.body && Object.keys(input.body).length > 0 ? input.body : undefined;
    if (forwarded && !trustedCaller(ctx))
      throw invalidField('body', 'only a trusted caller (x-internal-key) may pass a body to the provider');
    const claims = requireVerified(ctx, { uid: input.uid }, input.proof);
    const reply = await spending(ctx, claims, () =>
      issueAccessToken(ctx, input.uid, { stayLoggedIn: input.stay_logged_in ?? true, body: forwarded }),
    );
    return {
      data: {
        access_token: reply.access_token,
        ...(claims ? { proof: issueVerifiedProof(ctx, {}, claims, { fresh: true }) } : {}),
      },
    };
  },
});
