import type { CustomFields, IdentityFields, V3UserReply } from '../../clients/identity';
import type { CallContext } from '../../core/context';
import type { Deps } from '../service-context';

/*
 * Saving a profile (docs/contract.md#upstream-calls): identity fields (first_name, last_name, email) form-urlencoded,
 * custom fields (city, birth_date, otp_phone as a number) as JSON, one provider call each and
 * only for the group that has fields. `update_profile` saves both at once; the journeys save
 * them as steps 40 and 42. Whether a new otp_phone is free is checked before, by the caller.
 */

export interface SavedProfile {
  identity: V3UserReply | null;
  custom: V3UserReply | null;
}

/** Only the fields that are set: the provider keeps what is not sent. */
export const presentFields = <T extends object>(fields: T): Partial<T> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;

export async function saveProfile(
  deps: Pick<Deps, 'identity' | 'otp'>,
  ctx: CallContext,
  uid: string,
  fields: { identity?: IdentityFields; custom?: CustomFields },
): Promise<SavedProfile> {
  const identityFields = presentFields(fields.identity ?? {});
  const customFields = presentFields(fields.custom ?? {});
  const saved = {
    identity:
      Object.keys(identityFields).length > 0 ? await deps.identity.updateIdentity(ctx, uid, identityFields) : null,
    custom: Object.keys(customFields).length > 0 ? await deps.identity.updateCustom(ctx, uid, customFields) : null,
  };
  // A phone on file again ends any hold an email claim left on the account (email-claim.ts): it was that phone, proven, or the owner's choice of another.
  if (customFields.otp_phone) await deps.otp.releasePhone(uid);
  return saved;
}
