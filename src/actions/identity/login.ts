import { z } from 'zod';
import { jwtSubject } from '../../clients/identity/jwt';
import { codeVerified, issueVerifiedProof, requireVerified, spending } from '../../domain/guard';
import { claimAccountByProvenEmail } from '../../domain/accounts/email-claim';
import { emailField, proofField } from './fields';
import { challengeField } from '../otp/fields';
import { isApiError } from '../../core/errors';
import { storeReturnedToken } from '../../domain/accounts/tokens';
import { defineAction } from '../action';

const loginRequest = z.object({
  email: emailField,
  password: z.string().max(256).nullish(),
  stay_logged_in: z.boolean().nullish(),
  proof: proofField,
  challenge: challengeField,
});

/**
 * Passwordless without a password (issues a token on an email alone: guarded like access_token),
 * the email branch with one. The provider's login result is passed through; a token in it is
 * stored in `__utp`, and `data.proof` binds the account so the next steps need no other proof.
 * A password is a guess anyone can make: every attempt is counted per client IP and per email
 * before the provider hears of it, and a refusal is one `invalid_credentials` whether the email
 * is unknown or the password wrong (the client's mapping), so the answer reveals no account.
 * Passwordless spends its proof (the answer's proof is a fresh one); a proof of a code
 * delivered to the email first claims an account whose email was never confirmed.
 */
export const login = defineAction({
  name: 'login',
  summary: 'Identity login: passwordless (needs a verification proof for the email) or with password.',
  request: loginRequest,
  response: z.looseObject({ access_token: z.string().nullish(), proof: z.string().optional() }),
  reasons: ['proof_required', 'invalid_proof', 'invalid_credentials', 'rate_limited', 'challenge_required'],
  async handler(input, ctx) {
    const password = input.password || undefined;
    const stayLoggedIn = input.stay_logged_in ?? false;
    if (password) {
      // After wrong passwords for this email or from this client, a bot challenge first (docs/security.md).
      await ctx.deps.challenge.check(ctx, { action: 'login', identifier: input.email, password: true });
      await ctx.deps.limits.passwordLogin(ctx.ip, input.email);
    }
    const claims = password ? null : requireVerified(ctx, { email: input.email }, input.proof);
    let claimed = false;
    const reply = await spending(ctx, claims, async () => {
      if (claims && codeVerified(claims, 'email')) {
        const found = await ctx.deps.identity.findUserByEmail(ctx, input.email);
        if (found) claimed = (await claimAccountByProvenEmail(ctx.deps, ctx, found, null)).claimed;
      }
      return ctx.deps.identity.login(ctx, { email: input.email, password, stayLoggedIn });
    }).catch(async (err: unknown) => {
      if (password && isApiError(err) && err.reason === 'invalid_credentials')
        await ctx.deps.challenge.passwordFailed(ctx.ip, input.email);
      throw err;
    });
    storeReturnedToken(ctx, reply, stayLoggedIn);
    const uid = reply.access_token ? jwtSubject(reply.access_token) : undefined;
    const proof =
      uid && (password || claims)
        ? issueVerifiedProof(ctx, { linked: { uid, email: input.email } }, claims, { fresh: true, restart: claimed })
        : undefined;
    return { data: { ...reply, ...(proof ? { proof } : {}) } };
  },
});
