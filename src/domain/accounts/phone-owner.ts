import type { V3SearchReply, V3User } from '../../clients/identity';
import type { CallContext } from '../../core/context';
import type { Deps } from '../service-context';
import { apiError } from '../../core/errors';
import { toE164, toStoredDigits } from '../phone';
import { customValue } from './profile';

/*
 * Who holds a phone, by the provider's search on custom field `otp_phone`. The provider's
 * filter is trusted only as far as each user's stored value really is the same number
 * (compared in E.164): a filter the provider ignored must never bind a stranger's uid.
 */

const phoneTaken = () => apiError('phone_taken');

export function usersWithPhone(reply: V3SearchReply, e164: string, defaultRegion: string): V3User[] {
  const users = reply.users ?? [];
  if (users.length === 0) return [];
  // samePhone(stored, e164) for each user, with the searched number parsed once rather than once per user.
  const searched = toE164(e164, defaultRegion);
  if (searched === null) return [];
  return users.filter((user) => {
    const stored = customValue(user.custom_fields, 'otp_phone');
    return stored !== null && toE164(stored, defaultRegion) === searched;
  });
}

/** The provider's search for a phone (E.164), the raw reply and the users that really hold it. */
export async function searchPhone(
  deps: Pick<Deps, 'identity' | 'config'>,
  ctx: CallContext,
  e164: string,
): Promise<{ reply: V3SearchReply; holders: V3User[] }> {
  const reply = await deps.identity.searchByPhone(ctx, toStoredDigits(e164));
  return { reply, holders: usersWithPhone(reply, e164, deps.config.sms.default_region) };
}

/**
 * The contract: before an `otp_phone` is saved, it must not be held by another uid (`phone_taken`),
 * at the provider or in the store, where a phone an email claim dropped waits for its account (email-claim.ts).
 */
export async function ensurePhoneFree(
  deps: Pick<Deps, 'identity' | 'config' | 'otp'>,
  ctx: CallContext,
  e164: string,
  uid?: string,
): Promise<void> {
  const { holders } = await searchPhone(deps, ctx, e164);
  if (holders.some((user) => user.uid !== uid)) throw phoneTaken();
  const heldFor = await deps.otp.phoneHeldFor(e164);
  if (heldFor !== null && heldFor !== uid) throw phoneTaken();
}

/** otp_generate rule 2: a code goes to a phone and an email together only when one account holds both. */
export async function phoneBelongsToEmail(
  deps: Pick<Deps, 'identity' | 'config'>,
  ctx: CallContext,
  e164: string,
  email: string,
): Promise<boolean> {
  const { holders } = await searchPhone(deps, ctx, e164);
  return holders.some(
    (user) => typeof user.email === 'string' && user.email.trim().toLowerCase() === email.trim().toLowerCase(),
  );
}
