import { jwtSubject } from '../../clients/identity/jwt';
import type { LoginReply } from '../../clients/identity';
import type { CallContext } from '../../core/context';
import type { Deps } from '../service-context';

/*
 * Passwordless registration (the identity register call, docs/contract.md#upstream-calls), as both `register` and the
 * registration journeys (FeRegister phase register) run it: the provider creates the account,
 * and the new uid is read from the token it returns, or looked up by email when it returns none.
 */

export interface Registration {
  reply: LoginReply;
  /** The new account; undefined when the provider neither returned a token nor lists the email yet. */
  uid: string | undefined;
}

export async function registerAccount(
  deps: Pick<Deps, 'identity'>,
  ctx: CallContext,
  account: { email: string; consents?: Record<string, unknown> | null; isMagicLinkSent: boolean },
): Promise<Registration> {
  const reply = await deps.identity.register(ctx, account);
  const uid = jwtSubject(reply.access_token) ?? (await deps.identity.findUserByEmail(ctx, account.email))?.uid;
  return { reply, uid };
}
