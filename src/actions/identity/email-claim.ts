import type { IdentityProfile, V3User } from '../../clients/identity';
import type { Deps } from '../../deps';
import { reducedProfile } from './profile';

/*
 * Registration by phone (SPEC's "phone, new user") creates an account for an email the
 * registrant never proved, and may attach their phone to it. That must not outlive the email's
 * owner proving the email (docs/security.md): the first time a code delivered to the email is
 * used to reach an account whose email was never confirmed, the phone on it is dropped and the
 * email confirmed. From then on the registrant's phone opens nothing, and the owner's own
 * phones (added later, on a confirmed account) are kept.
 */

/** Only a state the provider states and that is not `confirmed`: a reply without one is left alone. */
const unconfirmed = (profile: IdentityProfile) => typeof profile.email_confirmation_state === 'string' && profile.email_confirmation_state.toLowerCase() !== 'confirmed';

/**
 * Claims the account of a proven email: `found` is the users/get profile (it carries the DOI
 * state), `user` the profile read. Answers whether a phone was dropped; callers then treat the
 * account as having none.
 */
export async function claimAccountByProvenEmail(deps: Pick<Deps, 'identity' | 'log'>, found: IdentityProfile, user: V3User | null): Promise<boolean> {
  if (!unconfirmed(found)) return false;
  const hadPhone = reducedProfile(user ?? found, found).otp_phone !== null;
  if (hadPhone) await deps.identity.updateCustom(found.uid, { otp_phone: null });
  await deps.identity.confirmDoi(found.uid);
  deps.log.info({ uid: found.uid, dropped_phone: hadPhone }, 'email proven: unconfirmed account claimed');
  return hadPhone;
}

/** A profile as it reads once its phone is dropped. */
export const withoutPhone = <T extends { custom_fields?: ReadonlyArray<{ field_name?: string | null; name?: string | null }> | null }>(profile: T): T => ({
  ...profile,
  custom_fields: profile.custom_fields?.filter((field) => (field.field_name ?? field.name) !== 'otp_phone') ?? profile.custom_fields,
});
