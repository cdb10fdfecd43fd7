import { collectIdpExchanges, type IdpExchange } from '../clients/identity/debug';
import { isApiError } from '../core/errors';
import type { ServiceContext } from './service-context';

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

/** Runs `work` and adds its identity exchanges to the answer's `extra` (and to a refusal's). */
export async function withIdpDebug<R extends object>(ctx: Pick<ServiceContext, 'deps'>, work: () => Promise<R>): Promise<R> {
  if (!ctx.deps.config.debug) return work();
  const exchanges: IdpExchange[] = [];
  try {
    const result = await collectIdpExchanges(exchanges, work);
    const { extra } = result as { extra?: Record<string, unknown> };
    return { ...result, extra: { ...extra, ...idpDebugFields(exchanges) } };
  } catch (err) {
    if (isApiError(err)) Object.assign(err.extra, idpDebugFields(exchanges));
    throw err;
  }
}

