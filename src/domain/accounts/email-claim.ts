import type { IdentityProfile, V3User } from '../../clients/identity';
import type { CallContext } from '../../core/context';
import type { Deps } from '../service-context';
import { reducedProfile } from './profile';

/*
 * Registration by phone (the typical sequence "phone, new user") creates an account for an email the
 * registrant never proved, and may attach their phone to it. That must not outlive the email's
 * owner proving the email (docs/security.md): the first time a code delivered to the email is
 * used to reach an account whose email was never confirmed, the phone on it is dropped and the
 * email confirmed, and every proof naming the account issued before that moment is void (the
 * OTP store records the claim; src/domain/guard.ts refuses older proofs). From then on the
 * registrant's phone and proofs open nothing, and the owner's own phones (added later, on a
 * confirmed account) are kept.
 */

/** Only a state the provider states and that is not `confirmed`: a reply without one is left alone. */
const unconfirmed = (profile: IdentityProfile) => typeof profile.email_confirmation_state === 'string' && profile.email_confirmation_state.toLowerCase() !== 'confirmed';

/**
 * Claims the account of a proven email: `found` is the users/get profile (it carries the DOI
 * state), `user` the profile read. Callers treat a dropped phone as gone, and a claimer's next
 * proof starts its chain now (issueVerifiedProof's `restart`), after the claim.
 */
export async function claimAccountByProvenEmail(deps: Pick<Deps, 'identity' | 'log' | 'otp'>, ctx: CallContext, found: IdentityProfile, user: V3User | null): Promise<ClaimOutcome> {
  if (!unconfirmed(found)) return { claimed: false, droppedPhone: false };
  // First: from now on no proof issued before this moment acts on the account (a registrant's live proofs).
  await deps.otp.markAccountClaimed(found.uid);
  const droppedPhone = reducedProfile(user ?? found, found).otp_phone !== null;
  if (droppedPhone) await deps.identity.updateCustom(ctx, found.uid, { otp_phone: null });
  await deps.identity.confirmDoi(ctx, found.uid);
  deps.log.info({ uid: found.uid, dropped_phone: droppedPhone, request_id: ctx.requestId }, 'email proven: unconfirmed account claimed');
  return { claimed: true, droppedPhone };
}

export interface ClaimOutcome {
  /** The account was unconfirmed and is now its email owner's: proofs issued before are void. */
  claimed: boolean;
  /** A phone was on it and is gone. */
  droppedPhone: boolean;
}

/** A profile as it reads once its phone is dropped. */
export const withoutPhone = <T extends { custom_fields?: ReadonlyArray<{ field_name?: string | null; name?: string | null }> | null }>(profile: T): T => ({
  ...profile,
  custom_fields: profile.custom_fields?.filter((field) => (field.field_name ?? field.name) !== 'otp_phone') ?? profile.custom_fields,
});
