import { z } from 'zod';
import { oneOfGiven } from '../document-rules';
import { invalidField } from '../../domain/otp/errors';
import {
  issueVerifiedProof,
  presentedProof,
  proofRequired,
  spending,
  trustedCaller,
  vouches,
} from '../../domain/guard';
import { issueAccessToken } from '../../domain/accounts/tokens';
import { proofField } from '../identity/fields';
import { defineAction } from '../action';
import { otpCodeField, otpKeyField } from './fields';
import { provenBy } from '../../domain/otp/reached';

const verifyOtpRequest = z
  .object({
    otp_code: otpCodeField,
    /** The contract: the OTP key, phone or email (named `email` for historical reasons). */
    email: otpKeyField.nullish(),
    is_registration: z.boolean().nullish(),
    /** The OTP key when `email` is absent; with is_registration, the user whose DOI is confirmed. */
    uid: otpKeyField.nullish(),
    access_token: z.string().max(4096).nullish(),
    stay_logged_in: z.boolean().nullish(),
    proof: proofField,
  })
  .meta(oneOfGiven(['email', 'uid']));

const verifyOtpResponse = z.object({
  valid: z.literal(true),
  doi: z.unknown().nullable().describe('DOI confirmation result, null unless confirmed'),
  access_token: z.string().nullable().describe('null unless a token was issued'),
  proof: z
    .string()
    .describe(
      'verification proof naming the phone and/or email the code was delivered to (never merely the key), and what an earlier proof bound; send it to the identity primitives',
    ),
});

/**
 * Verifies a code and answers a proof of what it proves: the addresses the code was delivered
 * to, not the key the caller named (docs/security.md). With `is_registration` and a `uid` it
 * also confirms the DOI and logs the new user in (sets `__utp`): the uid must be one an earlier
 * proof links (register answers such a proof), checked before the code is consumed, and the
 * code must have reached that proof's email; the earlier proof is spent.
 */
export const verifyOtp = defineAction({
  name: 'verify_otp',
  summary: 'Verifies a one-time code (one-shot); with is_registration and uid also confirms DOI and issues a token.',
  request: verifyOtpRequest,
  response: verifyOtpResponse,
  reasons: ['expired', 'invalid', 'too_many_attempts', 'store_unavailable', 'proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const { deps } = ctx;
    const rawKey = input.email || input.uid;
    if (!rawKey) throw invalidField('email', 'give the OTP key in email (or uid)');
    const earlier = presentedProof(ctx, input.proof);
    const trusted = trustedCaller(ctx);
    const confirmFor = input.is_registration && input.uid ? input.uid : undefined;
    if (confirmFor && !trusted && !(earlier && vouches(earlier, { uid: confirmFor }, 'all'))) throw proofRequired();

    const proven = provenBy(await deps.otp.verifyOrThrow(ctx, { key: rawKey, code: input.otp_code }));
    if (!confirmFor)
      return { data: { valid: true, doi: null, access_token: null, proof: issueVerifiedProof(ctx, proven, earlier) } };

    // DOI confirms an email: only one this code proved, and only for the account the earlier proof ties to it.
    const email = proven.verified.email;
    if (!trusted && !(email && earlier?.email?.toLowerCase() === email)) throw proofRequired();
    const { doi, token } = await spending(ctx, trusted ? null : earlier!, async () => {
      const doi = (await deps.identity.confirmDoi(ctx, confirmFor)) ?? { confirmed: true };
      return { doi, token: await issueAccessToken(ctx, confirmFor, { stayLoggedIn: input.stay_logged_in ?? true }) };
    });
    return {
      data: { valid: true, doi, access_token: token.access_token, proof: issueVerifiedProof(ctx, proven, earlier) },
    };
  },
});
