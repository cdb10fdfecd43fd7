import type { Context } from 'koa';
import { actionLabel } from '../core/metrics';
import type { Span, Tracing } from '../core/tracing';

/*
 * A traced request's own span (`tracing.enabled`): named, once answered, after its method and the
 * action or route it reached (`POST FeLogin`, `GET /healthz`), the same bounded names as the
 * metrics' `action` label. The answer names the trace in `traceresponse` (W3C Trace Context,
 * level 2), so support can ask a person for it.
 */

/** Reasons that are the service's failure, not the caller's refusal: the span is marked failed. */
const SERVICE_FAILURES = new Set(['internal_error', 'upstream_error', 'store_unavailable']);

/**
 * The caller's `traceparent` is continued only behind proxies the configuration trusts
 * (`server.trust_proxy_hops` above 0): from the open internet, a chosen trace id would let anyone
 * join an operator's traces or force sampling on.
 */
export function startRequestSpan(tracing: Tracing, ctx: Context, trustCaller: boolean): Span {
  const traceparent = trustCaller ? ctx.get('traceparent') || undefined : undefined;
  const span = tracing.startRequest(ctx.method, traceparent, { 'http.request.method': ctx.method });
  ctx.set('traceresponse', span.traceparent());
  return span;
}

export function endRequestSpan(span: Span, ctx: Context, outcome: string): void {
  const route = actionLabel(ctx);
  span.rename(`${ctx.method} ${route}`);
  span.set({ 'http.route': route, 'http.response.status_code': ctx.status, 'lfa.outcome': outcome });
  if (SERVICE_FAILURES.has(outcome) || ctx.status >= 500) span.fail(outcome);
  span.end();
}

/** The action's span, under the request's: the flow runner and the clients record under it. */
export function endActionSpan(span: Span, reason: string): void {
  span.set({ 'lfa.outcome': reason });
  if (SERVICE_FAILURES.has(reason)) span.fail(reason);
  span.end();
}
