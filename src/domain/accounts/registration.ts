import { jwtSubject } from '../../clients/identity/jwt';
import type { LoginReply } from '../../clients/identity';
import type { CallContext } from '../../core/context';
import { apiError, isApiError } from '../../core/errors';
import type { Deps } from '../service-context';

/*
 * Passwordless registration (the identity register call, docs/contract.md#upstream-calls), as both `register` and the
 * registration journeys (FeRegister phase register) run it: the provider creates the account,
 * and the new uid is read from the token it returns, or looked up by email when it returns none.
 * A refusal is `registration_refused`, and it is final: the proof that asked for it stays spent
 * (guard.ts, keepsProofSpent), so one verified code asks the provider about one email, not any
 * number of them (docs/security.md, "Metering").
 */

export interface Registration {
  reply: LoginReply;
  /** The new account; undefined when the provider neither returned a token nor lists the email yet. */
  uid: string | undefined;
}

export async function registerAccount(
  deps: Pick<Deps, 'identity' | 'limits'>,
  ctx: CallContext,
  account: { email: string; consents?: Record<string, unknown> | null; isMagicLinkSent: boolean },
): Promise<Registration> {
  await deps.limits.registration(ctx.ip);
  const reply = await deps.identity.register(ctx, account).catch((err: unknown) => {
    // The provider's refusal (`Email already registered`, 409) is a definite answer about someone's
    // email: its words stay in the log (the client logged its codes), the caller gets the catalogue's.
    if (isApiError(err) && err.reason === 'upstream_error' && Array.isArray(err.data.provider_errors))
      throw apiError('registration_refused', { cause: err });
    throw err;
  });
  const uid = jwtSubject(reply.access_token) ?? (await deps.identity.findUserByEmail(ctx, account.email))?.uid;
  return { reply, uid };
}
