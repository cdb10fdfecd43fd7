import { identityFailure, type IdentityProfile, type V3User } from '../../clients/identity';
import type { CallContext } from '../../core/context';
import type { Deps } from '../service-context';
import { toE164 } from '../phone';
import { customValue, reducedProfile } from './profile';

/*
 * Registration by phone (the typical sequence "phone, new user") creates an account for an email the
 * registrant never proved, and may attach their phone to it. That must not outlive the email's
 * owner proving the email (docs/security.md): the first time a code delivered to the email is
 * used to reach an account whose email was never confirmed, the account is claimed. Every proof
 * naming it issued before that moment is void (the OTP store records the claim;
 * src/domain/guard.ts refuses older proofs), the phone on it is dropped and read back gone, and
 * the email is confirmed. From then on the registrant's phone and proofs open nothing, and the
 * owner's own phones (added later, on a confirmed account) are kept.
 *
 * The dropped phone is held for the account for as long as a proof lives: no other account may
 * add it and it logs no one in, so the login journey can offer it back to the email's owner
 * (step 65: a code to that phone shows one person holds both, and the phone is saved again).
 * Declined, or left to expire, the claim simply stands: that is the safe default, and it needs
 * nothing to happen at expiry.
 */

/** Only a state the provider states and that is not `confirmed`: a reply without one is left alone. */
const unconfirmed = (profile: IdentityProfile) =>
  typeof profile.email_confirmation_state === 'string' &&
  profile.email_confirmation_state.toLowerCase() !== 'confirmed';

/** What a claim needs to know of an account: whether its email was never confirmed, and its phone on file (E.164). */
export interface ClaimableAccount {
  uid: string;
  unconfirmed: boolean;
  phone: string | null;
}

/** The claim's view of an account read as get_user_email reads it: `found` from users/get (it carries the DOI state), `user` the profile read. */
export function claimableAccount(found: IdentityProfile, user: V3User | null, region: string): ClaimableAccount {
  const stored = reducedProfile(user ?? found, found).otp_phone;
  return {
    uid: found.uid,
    unconfirmed: unconfirmed(found),
    phone: stored === null ? null : (toE164(stored, region) ?? stored),
  };
}

export interface ClaimOutcome {
  /** The account was unconfirmed and is now its email owner's: proofs issued before are void. */
  claimed: boolean;
  /** The phone that was on it, now gone from the provider and held for the account (E.164); null when there was none. */
  heldPhone: string | null;
}

type ClaimDeps = Pick<Deps, 'identity' | 'log' | 'otp'>;

/** Claims the account of a proven email when it was never confirmed; a confirmed one is left as it is. */
export async function claimAccount(
  deps: ClaimDeps,
  ctx: CallContext,
  account: ClaimableAccount,
): Promise<ClaimOutcome> {
  if (!account.unconfirmed) return { claimed: false, heldPhone: null };
  const { uid, phone } = account;
  // First: from now on no proof issued before this moment acts on the account (a registrant's live proofs).
  await deps.otp.markAccountClaimed(uid);
  if (phone !== null) {
    // Held before it is dropped, so there is no moment when the phone is free for anyone else.
    await deps.otp.holdPhone(uid, phone);
    await deps.identity.updateCustom(ctx, uid, { otp_phone: null });
    await ensurePhoneGone(deps, ctx, uid);
  }
  await deps.identity.confirmDoi(ctx, uid);
  deps.log.info(
    { uid, dropped_phone: phone !== null, request_id: ctx.requestId },
    'email proven: unconfirmed account claimed',
  );
  return { claimed: true, heldPhone: phone };
}

/**
 * `claimAccount` for the primitives, which read the account as users/get (`found`) and, when
 * they have it, the profile read (`user`): without it the claim reads the profile itself, as
 * users/get may leave custom fields out and a phone it does not show would stay.
 */
export async function claimAccountByProvenEmail(
  deps: ClaimDeps & Pick<Deps, 'config'>,
  ctx: CallContext,
  found: IdentityProfile,
  user: V3User | null,
): Promise<ClaimOutcome> {
  if (!unconfirmed(found)) return { claimed: false, heldPhone: null };
  const profile = user ?? (await deps.identity.getUser(ctx, found.uid));
  return claimAccount(deps, ctx, claimableAccount(found, profile, deps.config.sms.default_region));
}

/**
 * A provider that answered the update but kept the phone would leave the registrant's phone on
 * the owner's account: nothing after the claim may assume it gone, so the request fails.
 */
async function ensurePhoneGone(deps: ClaimDeps, ctx: CallContext, uid: string): Promise<void> {
  const user = await deps.identity.getUser(ctx, uid);
  if (user !== null && customValue(user.custom_fields, 'otp_phone') === null) return;
  deps.log.error(
    { uid, request_id: ctx.requestId, read_back: user === null ? 'no user' : 'otp_phone kept' },
    'email claim: the provider did not drop the phone',
  );
  throw identityFailure('update_profile', { check: 'otp_phone_dropped' });
}

/** A profile as it reads once its phone is dropped. */
export const withoutPhone = <
  T extends { custom_fields?: ReadonlyArray<{ field_name?: string | null; name?: string | null }> | null },
>(
  profile: T,
): T => ({
  ...profile,
  custom_fields:
    profile.custom_fields?.filter((field) => (field.field_name ?? field.name) !== 'otp_phone') ?? profile.custom_fields,
});
