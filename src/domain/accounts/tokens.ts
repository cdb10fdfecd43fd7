import type { TokenReply } from '../../clients/identity';
import type { ServiceContext } from '../service-context';

/*
 * Every token the service obtains is also stored in the cookie `__utp` (docs/contract.md#authentication,
 * Authentication 2): the token issue and that cookie are one sequence, run by `access_token`,
 * `verify_otp` and every journey that logs a user in.
 */

type TokenContext = Pick<ServiceContext, 'deps' | 'tokenCookie' | 'requestId' | 'trace' | 'idpExchanges'>;

/** The publisher token for a uid, stored in `__utp`. */
export async function issueAccessToken(
  ctx: TokenContext,
  uid: string,
  options: { stayLoggedIn: boolean; body?: Record<string, unknown> | null },
): Promise<TokenReply> {
  const reply = await ctx.deps.identity.issueToken(ctx, uid, options.body);
  ctx.tokenCookie.set(reply.access_token, { stayLoggedIn: options.stayLoggedIn, expiresIn: reply.expires_in });
  return reply;
}

/** Stores a token the provider returned (login, register, refresh), when there is a new one. */
export function storeReturnedToken(
  ctx: TokenContext,
  reply: { access_token?: string | null; expires_in?: number | null },
  stayLoggedIn: boolean,
): boolean {
  const token = reply.access_token;
  if (!token || token === ctx.tokenCookie.get()) return false;
  ctx.tokenCookie.set(token, { stayLoggedIn, expiresIn: reply.expires_in });
  return true;
}

/** The contract's token result (docs/contract.md#shapes). */
export function tokenResult(reply: Partial<TokenReply>) {
  return {
    access_token: reply.access_token ?? null,
    token_type: reply.token_type ?? 'Bearer',
    refresh_token: reply.refresh_token ?? null,
    expires_in: reply.expires_in ?? null,
    email_confirmation_required: reply.email_confirmation_required ?? false,
  };
}
