import type { Context } from 'koa';
import type { Config } from '../core/config/schema';
import type { TokenCookie, TokenCookieOptions } from '../core/context';

/*
 * docs/contract.md#authentication, 2: every access token the service issues or refreshes is stored in
 * the cookie `__utp`. HttpOnly (no script reads it), SameSite=Lax (sent on top-level
 * navigation, not on cross-site subrequests), Path=/, domain `server.cookie_domain` when set.
 * Secure unless `sandbox.enabled`: a bearer token never travels over plain http, whatever
 * NODE_ENV says; only the sandbox, which runs on http://127.0.0.1, needs it without. Lifetime
 * follows `stay_logged_in`: persistent for the token's `expires_in` (else
 * `server.cookie_max_age_seconds`, 30 days) when true, a session cookie when false.
 */

const TOKEN_COOKIE = '__utp';

/** The request's `__utp` cookie, as the layers below the transport use it (core/context.ts). */
export function tokenCookieOf(ctx: Pick<Context, 'cookies'>, config: Pick<Config, 'server' | 'sandbox'>): TokenCookie {
  return {
    get: () => ctx.cookies.get(TOKEN_COOKIE) || undefined,
    set: (token, options) => setTokenCookie(ctx, config, token, options),
  };
}

function setTokenCookie(
  ctx: Pick<Context, 'cookies'>,
  config: Pick<Config, 'server' | 'sandbox'>,
  token: string,
  { stayLoggedIn, expiresIn }: TokenCookieOptions,
): void {
  const { server, sandbox } = config;
  const secure = !sandbox.enabled;
  // TLS usually ends at a proxy: the browser's connection is secure even when ours is not,
  // and the cookie library refuses a Secure cookie over plain http unless told so.
  if (secure) ctx.cookies.secure = true;
  const lifetimeSeconds = expiresIn && expiresIn > 0 ? expiresIn : server.cookie_max_age_seconds;
  ctx.cookies.set(TOKEN_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    overwrite: true,
    ...(server.cookie_domain ? { domain: server.cookie_domain } : {}),
    ...(stayLoggedIn ? { maxAge: lifetimeSeconds * 1000 } : {}),
  });
}
