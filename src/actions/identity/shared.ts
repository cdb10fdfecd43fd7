import type { z } from 'zod';
import { collectIdpExchanges, type IdpExchange } from '../../clients/identity/debug';
import { isApiError } from '../../core/errors';
import { defineAction, type Action, type ActionContext, type ActionResult } from '../action';

/*
 * `idp_debug` (SPEC.md, only when `debug` is on): the identity exchanges of this request,
 * masked by the client. One exchange: `idp_debug` is it; several: `idp_debug` is the last and
 * `idp_debugs` lists them all. Failures carry them too, which is when they help most.
 */
export function idpDebugFields(exchanges: readonly IdpExchange[]): Record<string, unknown> {
  if (exchanges.length === 0) return {};
  const last = exchanges[exchanges.length - 1];
  return exchanges.length === 1 ? { idp_debug: last } : { idp_debug: last, idp_debugs: [...exchanges] };
}

export async function withIdpDebug(ctx: Pick<ActionContext, 'deps'>, work: () => Promise<ActionResult>): Promise<ActionResult> {
  if (!ctx.deps.config.debug) return work();
  const exchanges: IdpExchange[] = [];
  try {
    const result = await collectIdpExchanges(exchanges, work);
    return { ...result, extra: { ...result.extra, ...idpDebugFields(exchanges) } };
  } catch (err) {
    if (isApiError(err)) Object.assign(err.extra, idpDebugFields(exchanges));
    throw err;
  }
}

/** An action whose answer carries `idp_debug` when `debug` is on. */
export const defineIdentityAction = <S extends z.ZodType>(action: Action<S>): Action<S> =>
  defineAction({ ...action, handler: (input, ctx) => withIdpDebug(ctx, () => action.handler(input, ctx)) });
