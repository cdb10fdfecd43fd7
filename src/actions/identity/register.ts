import { z } from 'zod';
import { registerAccount } from '../../domain/accounts/registration';
import { issueVerifiedProof, requireVerified, spending } from '../../domain/guard';
import { invalidProof } from '../../domain/proofs';
import { isApiError } from '../../core/errors';
import type { ActionContext } from '../action';
import { emailField, optionalPhone, proofField, requirePhone } from './fields';
import { challengeField, localeField } from '../otp/fields';
import { storeReturnedToken } from '../../domain/accounts/tokens';
import { defineAction } from '../action';

const registerRequest = z.object({
  email: emailField,
  /** The verified phone of a phone-first registration: binds the proof, not sent to the provider. */
  phone: optionalPhone,
  consents: z.record(z.string(), z.unknown()).nullish(),
  is_magic_link_sent: z.boolean().nullish(),
  send_otp: z.boolean().nullish(),
  proof: proofField,
  locale: localeField,
  challenge: challengeField,
});

const registerResponse = z.object({
  access_token: z.string().nullable(),
  pub_id: z.string().nullable(),
  uid: z.string().nullable(),
  otp: z.string().optional().describe('only when otp.debug is on'),
  otp_sent: z.boolean(),
  otp_reason: z.string().optional().describe('why no code was sent (already_sent, delivery_failed, ...)'),
  proof: z.string().optional(),
});

/** The contract: `send_otp` (default true) sends an OTP to the new account's email; its failure does not undo the registration. */
async function sendRegistrationOtp(ctx: ActionContext, email: string) {
  try {
    const sent = await ctx.deps.otp.generate(ctx, { key: email, email, fields: { key: 'email', email: 'email' } });
    return { otp_sent: true, ...(sent.otp ? { otp: sent.otp } : {}) };
  } catch (err) {
    if (!isApiError(err)) throw err;
    ctx.log.warn({ reason: err.reason }, 'registration OTP not sent');
    return { otp_sent: false, otp_reason: err.reason };
  }
}

/**
 * Passwordless registration. Needs a proof that the caller verified the email or the phone
 * given (the account is new, so there is no uid to bind); answers a proof binding the new uid.
 * The proof is spent, and a proof that already names an account registers nothing: one
 * verification registers at most one account. An email registered on a phone proof alone is
 * not the registrant's for good: see email-claim.ts.
 */
export const register = defineAction({
  name: 'register',
  summary: 'Passwordless registration; needs a verification proof for the email or the phone given.',
  request: registerRequest,
  response: registerResponse,
  reasons: ['proof_required', 'invalid_proof', 'registration_refused', 'rate_limited', 'challenge_required'],
  async handler(input, ctx) {
    const phone = input.phone ? requirePhone(input.phone, 'phone', ctx.deps.config.sms.default_region) : undefined;
    const claims = requireVerified(ctx, { email: input.email, phone }, input.proof, 'any');
    if (claims?.uid) throw invalidProof('registered');
    // Asked before the account is made, not at the code's send after it: the repeated request must find nothing done.
    if (input.send_otp !== false) await ctx.deps.challenge.check(ctx, { action: 'register', identifier: input.email });
    const { reply, uid } = await spending(ctx, claims, () =>
      registerAccount(ctx.deps, ctx, {
        email: input.email,
        consents: input.consents,
        isMagicLinkSent: input.is_magic_link_sent ?? false,
      }),
    );
    storeReturnedToken(ctx, reply, true);
    const otp = input.send_otp === false ? { otp_sent: false } : await sendRegistrationOtp(ctx, input.email);
    const proof = uid
      ? issueVerifiedProof(ctx, { linked: { uid, email: input.email } }, claims, { fresh: true })
      : undefined;
    return {
      data: {
        access_token: reply.access_token ?? null,
        pub_id: reply.pub_id ?? null,
        uid: uid ?? null,
        ...otp,
        ...(proof ? { proof } : {}),
      },
    };
  },
});
