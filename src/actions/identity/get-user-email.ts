import { z } from 'zod';
import { codeVerified, issueVerifiedProof, presentedProof, trustedCaller, vouches } from '../../domain/guard';
import { claimAccountByProvenEmail, withoutPhone } from '../../domain/accounts/email-claim';
import { emailField, proofField } from './fields';
import { limitedProfileMeta, profileMeta, reducedProfile, reducedProfileShape } from '../../domain/accounts/profile';
import { defineAction } from '../action';

const getUserEmailRequest = z.object({ email: emailField, proof: proofField });

/**
 * users/get by email, then the v3 profile read for the custom fields (users/get's may be
 * partial). Without a proof for the email (guard on): meta.exists and has_otp_phone only.
 * With a proof of a code delivered to the email, an account whose email was never confirmed
 * is claimed first (email-claim.ts).
 */
export const getUserEmail = defineAction({
  name: 'get_user_email',
  summary: 'Reduced profile by email; full answer with a verification proof for the email.',
  request: getUserEmailRequest,
  response: reducedProfileShape.extend({ proof: z.string().optional() }).nullable(),
  reasons: ['proof_required', 'invalid_proof', 'rate_limited'],
  async handler(input, ctx) {
    const claims = trustedCaller(ctx) ? null : presentedProof(ctx, input.proof);
    const full = claims === null || (claims !== undefined && vouches(claims, { email: input.email }, 'all'));
    // An unproven answer still says whether the email has an account: counted against enumeration.
    if (!full) await ctx.deps.limits.lookupFromIp(ctx.ip);
    let found = await ctx.deps.identity.findUserByEmail(ctx, input.email);
    let user = found ? await ctx.deps.identity.getUser(ctx, found.uid) : null;
    const claim =
      full && found && claims && codeVerified(claims, 'email')
        ? await claimAccountByProvenEmail(ctx.deps, ctx, found, user)
        : undefined;
    if (found && claim?.heldPhone) {
      // The phone was dropped at the provider: no copy read before may bring it back.
      found = withoutPhone(found);
      user = user && withoutPhone(user);
    }
    const profile = found ? reducedProfile(user ?? found, found) : null;
    const meta = profileMeta(profile);
    if (!full) return { data: null, extra: { meta: limitedProfileMeta(meta) } };
    if (!profile) return { data: null, extra: { meta } };
    const proof = claims
      ? issueVerifiedProof(ctx, { linked: { uid: profile.uid, email: profile.email ?? undefined } }, claims, {
          restart: claim?.claimed,
        })
      : undefined;
    return { data: { ...profile, ...(proof ? { proof } : {}) }, extra: { meta } };
  },
});
