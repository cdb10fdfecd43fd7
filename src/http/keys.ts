import type { Context, Next } from 'koa';
import type { PresentedKeys } from '../core/context';
import type { Deps } from '../domain/deps';
import { KEY_HEADERS, NO_KEYS, type LogScope } from '../domain/keys';

/*
 * The HTTP side of the keys (src/domain/keys.ts): every request that presents `x-internal-key`
 * or `x-funnel-key` has them checked once, before any route or action, whatever it asks for, so
 * a guess counts wherever it is tried and a locked-out client is refused (429) everywhere. What
 * held is kept on the request for the guard; nothing below reads the headers again.
 */

/** The keys a request presented and that held; none on a request `checkKeys` did not see. */
export const keysOf = (ctx: Context): PresentedKeys => (ctx.state.keys as PresentedKeys | undefined) ?? NO_KEYS;

export function checkKeys(deps: Pick<Deps, 'keys'>) {
  const checked = async (ctx: Context, next: Next, given: { internal: string; funnel: string }) => {
    ctx.state.keys = await deps.keys.check(ctx.ip, given, ctx.state as LogScope);
    await next();
  };
  return function checkKeys(ctx: Context, next: Next): Promise<void> {
    const internal = ctx.get(KEY_HEADERS.internal);
    const funnel = ctx.get(KEY_HEADERS.funnel);
    // Most requests carry neither: no store is asked, no promise made.
    // Stryker disable next-line ConditionalExpression,StringLiteral: check() of empty keys counts and holds nothing
    return internal === '' && funnel === '' ? next() : checked(ctx, next, { internal, funnel });
  };
}

/**
 * Whether `Authorization: Bearer <metrics.token>` holds. A header of another scheme cannot be
 * the token, so it is no guess and is not counted (it is refused all the same).
 */
export async function metricsTokenHeld(deps: Pick<Deps, 'keys'>, ctx: Context): Promise<boolean> {
  const given = /^Bearer +(\S+)\s*$/i.exec(ctx.get(KEY_HEADERS.metrics))?.[1];
  // Stryker disable next-line ConditionalExpression: check() passes over an absent key; this only spares the call
  return given !== undefined && (await deps.keys.check(ctx.ip, { metrics: given }, ctx.state as LogScope)).metrics;
}
