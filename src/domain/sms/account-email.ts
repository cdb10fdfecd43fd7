import type { CallContext } from '../../core/context';
import type { Deps } from '../service-context';
import { searchPhone } from '../accounts/phone-owner';

/*
 * The email an SMS may fall back to: the confirmed email of the one account that holds the
 * phone. Confirmed, because a code mailed to an address nobody proved is a code to whoever
 * typed it at registration; one account, because two holders would make the mail a guess.
 */
export async function confirmedEmailOfPhone(
  deps: Pick<Deps, 'identity' | 'config'>,
  ctx: CallContext,
  phone: string,
): Promise<string | undefined> {
  const { holders } = await searchPhone(deps, ctx, phone);
  if (holders.length !== 1) return undefined;
  const [holder] = holders;
  const email = typeof holder!.email === 'string' ? holder!.email.trim().toLowerCase() : '';
  if (!email) return undefined;
  const profile = await deps.identity.findUserByEmail(ctx, email);
  if (!profile || profile.uid !== holder!.uid) return undefined;
  return String(profile.email_confirmation_state ?? '').toLowerCase() === 'confirmed' ? email : undefined;
}
