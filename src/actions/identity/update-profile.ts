import { z } from 'zod';
import { oneOfGiven } from '../document-rules';
import type { CustomFields, IdentityFields } from '../../clients/identity';
import { apiError } from '../../core/errors';
import { issueVerifiedProof, requireVerified, spending } from '../../domain/guard';
import { toStoredDigits } from '../../domain/phone';
import { optionalDate, optionalEmail, optionalPhone, optionalText, proofField, requirePhone, uidField } from './fields';
import { presentFields, saveProfile } from '../../domain/accounts/profile-save';
import { ensurePhoneFree } from '../../domain/accounts/phone-owner';
import { defineAction } from '../action';

const updateProfileRequest = z
  .object({
    uid: uidField,
    email: optionalEmail,
    first_name: optionalText,
    last_name: optionalText,
    otp_phone: optionalPhone,
    city: optionalText,
    birth_date: optionalDate,
    proof: proofField,
  })
  .meta(oneOfGiven(['email', 'first_name', 'last_name', 'otp_phone', 'city', 'birth_date']));

const updateProfileResponse = z.object({
  calls: z.array(z.enum(['identity', 'custom'])),
  identity: z.looseObject({}).nullable().describe('provider result of the identity update'),
  custom: z.looseObject({}).nullable().describe('provider result of the custom-field update'),
  proof: z.string().optional().describe('a fresh proof for the next change (the one sent is spent)'),
});

/**
 * One or two provider calls: identity fields (first_name, last_name, email) form-urlencoded,
 * custom fields (city, birth_date, otp_phone as a number) as JSON. A new `otp_phone` is
 * checked first: held by another uid means `phone_taken` and no update at all; the check tells
 * whether a phone has an account, so it counts against the lookup limits. The proof is spent;
 * the answer carries a fresh one.
 */
export const updateProfile = defineAction({
  name: 'update_profile',
  summary: 'Updates identity and/or custom fields; otp_phone must not be held by another uid.',
  request: updateProfileRequest,
  response: updateProfileResponse,
  reasons: ['proof_required', 'invalid_proof', 'phone_taken', 'user_not_found', 'rate_limited'],
  async handler(input, ctx) {
    const { uid, proof: _proof, ...fields } = input;
    const identityFields: IdentityFields = presentFields({
      first_name: fields.first_name,
      last_name: fields.last_name,
      email: fields.email,
    });
    const phone = fields.otp_phone
      ? requirePhone(fields.otp_phone, 'otp_phone', ctx.deps.config.sms.default_region)
      : undefined;
    const customFields: CustomFields = presentFields({
      city: fields.city,
      birth_date: fields.birth_date,
      otp_phone: phone && toStoredDigits(phone),
    });
    if (Object.keys(identityFields).length + Object.keys(customFields).length === 0) {
      throw apiError('invalid_request', { data: { issues: [{ path: '', message: 'no field to update' }] } });
    }
    const claims = requireVerified(ctx, { uid, email: identityFields.email, phone }, input.proof);
    if (phone) {
      await ctx.deps.limits.phoneCheck(ctx.ip, uid);
      await ensurePhoneFree(ctx.deps, ctx, phone, uid);
    }

    const saved = await spending(ctx, claims, () =>
      saveProfile(ctx.deps, ctx, uid, { identity: identityFields, custom: customFields }),
    );
    const calls = [...(saved.identity ? ['identity' as const] : []), ...(saved.custom ? ['custom' as const] : [])];
    const proof = claims ? { proof: issueVerifiedProof(ctx, {}, claims, { fresh: true }) } : {};
    return {
      data: { calls, identity: saved.identity, custom: saved.custom, ...proof },
      extra: { payload: { uid, ...presentFields(fields) } },
    };
  },
});
