import type { ActionContext } from './action';
import { apiError } from '../core/errors';

/*
 * docs/contract.md#authentication, 1: the user's access token comes from the body field, the cookie
 * `__utp`, or `Authorization: Bearer <token>`, in that order: the first one present wins.
 */

export type TokenSource = 'body' | 'cookie' | 'bearer';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function findUserToken(
  ctx: Pick<ActionContext, 'tokenCookie' | 'header'>,
  fromBody?: string | null,
): { token: string; source: TokenSource } | undefined {
  if (fromBody) return { token: fromBody, source: 'body' };
  const cookie = ctx.tokenCookie.get();
  if (cookie) return { token: cookie, source: 'cookie' };
  const bearer = BEARER.exec(ctx.header('authorization') ?? '')?.[1];
  return bearer ? { token: bearer, source: 'bearer' } : undefined;
}

/** The user's token, or `token_required`. */
export function requireUserToken(
  ctx: Pick<ActionContext, 'tokenCookie' | 'header'>,
  fromBody?: string | null,
): { token: string; source: TokenSource } {
  const found = findUserToken(ctx, fromBody);
  if (!found) {
    throw apiError('token_required');
  }
  return found;
}
