import { z } from 'zod';
import type { CustomField, IdentityProfile, V3User } from '../../clients/identity';

/*
 * The contract's reduced profile (get_user, get_user_email) and its meta. Custom fields come as a
 * list of `{ field_name, value }` with string values; a value that is absent or empty is null.
 * `profile_complete` (the contract is silent): names, city, birth date and phone all present, the
 * fields FeRegister's phase `register` and FeAddPhone collect.
 */

export const reducedProfileShape = z.object({
  uid: z.string(),
  email: z.string().nullable(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  city: z.string().nullable(),
  birth_date: z.string().nullable().describe('YYYY-MM-DD'),
  otp_phone: z.string().nullable().describe('digits, as stored at the identity provider'),
  has_otp_phone: z.boolean(),
  profile_complete: z.boolean(),
});
export type ReducedProfile = z.infer<typeof reducedProfileShape>;

const text = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
};

export function customValue(fields: readonly CustomField[] | null | undefined, name: string): string | null {
  const field = fields?.find((f) => (f.field_name ?? f.name) === name);
  return text(field?.value);
}

/** The reduced profile of a user; fields missing from `user` are taken from `fallback` (users/get beside user/get). */
export function reducedProfile(
  user: V3User | IdentityProfile,
  fallback?: V3User | IdentityProfile | null,
): ReducedProfile {
  const pick = (key: 'email' | 'first_name' | 'last_name') => text(user[key]) ?? text(fallback?.[key]);
  const custom = (name: string) => customValue(user.custom_fields, name) ?? customValue(fallback?.custom_fields, name);
  const profile = {
    uid: user.uid,
    email: pick('email'),
    first_name: pick('first_name'),
    last_name: pick('last_name'),
    city: custom('city'),
    birth_date: custom('birth_date'),
    otp_phone: custom('otp_phone'),
  };
  return {
    ...profile,
    has_otp_phone: profile.otp_phone !== null,
    profile_complete: [
      profile.first_name,
      profile.last_name,
      profile.city,
      profile.birth_date,
      profile.otp_phone,
    ].every((v) => v !== null),
  };
}

/** @public The `meta` of get_user and get_user_email: the answer's shape for the document. */
export const profileMetaShape = z.object({
  exists: z.boolean(),
  uid: z.string().nullable(),
  has_otp_phone: z.boolean(),
  otp_phone: z.string().nullable(),
  profile_complete: z.boolean().nullable(),
  limited: z.boolean().optional().describe('true when the answer is reduced for lack of a verification proof'),
});
export type ProfileMeta = z.infer<typeof profileMetaShape>;

export function profileMeta(profile: ReducedProfile | null): ProfileMeta {
  return {
    exists: profile !== null,
    uid: profile?.uid ?? null,
    has_otp_phone: profile?.has_otp_phone ?? false,
    otp_phone: profile?.otp_phone ?? null,
    profile_complete: profile?.profile_complete ?? false,
  };
}

/** What an unverified caller may learn before verification: whether the account exists and has a phone. */
export const limitedProfileMeta = (meta: ProfileMeta): ProfileMeta => ({
  ...meta,
  uid: null,
  otp_phone: null,
  profile_complete: null,
  limited: true,
});
