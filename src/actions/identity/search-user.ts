import { z } from 'zod';
import { phoneText } from '../document-rules';
import { issueVerifiedProof, presentedProof, trustedCaller, vouches } from '../../domain/guard';
import { customValue } from '../../domain/accounts/profile';
import { proofField, requirePhone } from './fields';
import { searchPhone } from '../../domain/accounts/phone-owner';
import { defineAction } from '../action';

const searchUserRequest = z.object({
  phone: phoneText().min(1),
  proof: proofField,
});

/**
 * Without a proof for the phone (guard on), only what the flow needs before verification:
 * found, count, has_otp_phone; data null. With one, the raw search result and `data.proof`
 * also binding the account found (docs/identity.md).
 */
export const searchUser = defineAction({
  name: 'search_user',
  summary: 'Searches users by custom field otp_phone; full answer with a verification proof for the phone.',
  request: searchUserRequest,
  response: z.looseObject({ users: z.array(z.unknown()).nullish(), proof: z.string().optional() }).nullable(),
  reasons: ['proof_required', 'invalid_proof', 'rate_limited'],
  async handler(input, ctx) {
    const phone = requirePhone(input.phone, 'phone', ctx.deps.config.sms.default_region);
    const claims = trustedCaller(ctx) ? null : presentedProof(ctx, input.proof);
    const full = claims === null || (claims !== undefined && vouches(claims, { phone }, 'all'));
    // An unproven answer still says whether the phone has an account: counted against enumeration.
    if (!full) await ctx.deps.limits.lookupFromIp(ctx.ip);
    const { reply, holders } = await searchPhone(ctx.deps, ctx, phone);
    const first = holders[0];
    const otpPhone = first ? customValue(first.custom_fields, 'otp_phone') : null;
    const meta = {
      found: holders.length > 0,
      count: holders.length,
      uid: first?.uid ?? null,
      email: first?.email ?? null,
      has_otp_phone: otpPhone !== null,
      otp_phone: otpPhone,
    };
    if (!full)
      return { data: null, extra: { meta: { ...meta, uid: null, email: null, otp_phone: null, limited: true } } };
    const proof =
      claims && first
        ? issueVerifiedProof(ctx, { linked: { uid: first.uid, email: first.email ?? undefined } }, claims)
        : undefined;
    return { data: { ...reply, ...(proof ? { proof } : {}) }, extra: { meta } };
  },
});
