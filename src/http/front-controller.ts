import type { Context } from 'koa';
import type { Action, ActionContext, TraceEntry } from '../actions/action';
import type { Deps } from '../domain/deps';
import type { Logger } from '../core/logger';
import type { PresentedKeys, TokenCookie } from '../core/context';
import { closest, distance } from 'fastest-levenshtein';
import { apiError, isApiError } from '../core/errors';
import { tokenCookieOf } from './cookies';
import { createFlowRunner, type FlowRunner } from '../flows/run-flow-action';
import { funnelObserverFor } from '../domain/funnel/observer';
import { successEnvelope } from './envelope';
import { checkBodyShape, parseRequest } from './validate';
import type { LocaleOf } from './locale';
import { keysOf } from './keys';
import type { Span } from '../core/tracing';
import { endActionSpan } from './request-span';

const ACTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** docs/contract.md#addressing-and-envelope, 1: `POST /?action=X` and `POST /X` are the same call. */
function actionName(ctx: Context): string | undefined {
  if (ctx.path.length > 1) return ctx.path.slice(1);
  // Read straight from the query string: Koa's ctx.query parses every parameter into an object first.
  const querystring = ctx.querystring;
  if (querystring === '') return undefined;
  const values = new URLSearchParams(querystring).getAll('action');
  // A repeated parameter is an array in ctx.query: no action name, as before.
  return values.length === 1 ? values[0] : undefined;
}

/**
 * A request on the root that names an action in its query (`/?action=FeLogin`, even with no
 * value): it is addressed to the actions, which answer any method but POST with 405, never to a
 * page mounted on `/`.
 */
export const namesActionInQuery = (ctx: Pick<Context, 'path' | 'querystring'>): boolean =>
  ctx.path === '/' && ctx.querystring !== '' && new URLSearchParams(ctx.querystring).has('action');

/**
 * One request as its action sees it. A class, so a request allocates one object and no
 * closures: the logger and the `__utp` cookie are made when first asked for
 * (most requests log nothing and set no cookie).
 */
class RequestActionContext implements ActionContext {
  readonly requestId: string;
  /** Read now: the socket's address is gone once the client hangs up. */
  readonly ip: string;
  readonly trace: TraceEntry[] = [];
  idpExchanges?: Array<Record<string, unknown>>;
  #cookie: TokenCookie | undefined;

  constructor(
    readonly deps: Deps,
    readonly flows: FlowRunner,
    private readonly koa: Context,
    private readonly localeOf: LocaleOf,
    readonly action: string | undefined,
    readonly challenge: string | undefined,
    readonly span: Span | undefined,
  ) {
    this.requestId = koa.state.requestId as string;
    this.ip = koa.ip;
  }

  // The request's child logger is only made when a handler logs (src/http/app.ts).
  get log(): Logger {
    return this.koa.state.log as Logger;
  }

  header(name: string): string | undefined {
    return this.koa.get(name) || undefined;
  }

  get keys(): PresentedKeys {
    return keysOf(this.koa);
  }

  // Resolved only when a code is sent or an error answered (src/http/locale.ts).
  get locale(): string {
    return this.localeOf(this.koa);
  }

  get tokenCookie(): TokenCookie {
    return (this.#cookie ??= tokenCookieOf(this.koa, this.deps.config));
  }
}

export function createFrontController(deps: Deps, actions: ReadonlyMap<string, Action>, localeOf: LocaleOf) {
  // Built once with the app: the login machine with its effects, and the funnel watching its steps (none when it is off).
  const flows = createFlowRunner(deps, funnelObserverFor(deps));
  return async function frontController(ctx: Context): Promise<void> {
    const name = actionName(ctx);
    const action = name && ACTION_NAME.test(name) ? actions.get(name) : undefined;
    ctx.state.action = action?.name ?? 'unknown';
    if (!action) {
      const suggestion = name ? closestAction(name, actions) : undefined;
      throw apiError('unknown_action', {
        data: { action: name?.slice(0, 64) ?? null, ...(suggestion ? { did_you_mean: suggestion } : {}) },
      });
    }
    const body = ctx.request.body ?? {};
    checkBodyShape(body);
    // A valid request (nearly every one) is read without its language: only a refusal's issues need
    // it, and resolving it may negotiate Accept-Language. The issues would read the same either way.
    const valid = action.request.safeParse(body);
    const input = valid.success ? valid.data : parseRequest(action.request, body, localeOf(ctx));
    // The bot challenge's solution, where the action takes one (src/domain/limits/challenge.ts): only such an action's sends are asked for one.
    const solution = (input as { challenge?: unknown }).challenge;
    const span = (ctx.state.span as Span | undefined)?.child(action.name);
    const actionCtx = new RequestActionContext(
      deps,
      flows,
      ctx,
      localeOf,
      takesChallenge(action) ? action.name : undefined,
      typeof solution === 'string' && solution !== '' ? solution : undefined,
      span,
    );
    const { trace } = actionCtx;
    // Identity exchanges are collected (masked) only when `debug` is on: `idp_debug`.
    const idpExchanges = deps.config.debug ? [] : undefined;
    if (idpExchanges) actionCtx.idpExchanges = idpExchanges;
    let result;
    try {
      result = await action.handler(input, actionCtx);
      if (span) endActionSpan(span, 'ok');
    } catch (err) {
      if (span) endActionSpan(span, isApiError(err) ? err.reason : 'internal_error');
      // A provider's failure carries its exchanges: that is when they help most. A refusal of the
      // caller does not: the provider's reply behind it (a profile, "unknown email") is exactly
      // what the caller was refused.
      if (idpExchanges && isApiError(err) && err.reason === 'upstream_error')
        Object.assign(err.extra, idpDebugFields(idpExchanges));
      throw err;
    }
    ctx.status = 200;
    if (result.body !== undefined) {
      ctx.body = result.body;
      return;
    }
    const extra = { ...result.extra, ...(idpExchanges && !trimmed(result.extra) ? idpDebugFields(idpExchanges) : {}) };
    if (deps.config.debug && trace.length > 0) extra.debug = trace;
    ctx.body = successEnvelope(result.data ?? null, extra);
  };
}

const challengeTakers = new WeakMap<Action, boolean>();
/**
 * Whether an action's request has a `challenge` field. A send made by one that has none (FeVerifyOtp's
 * code to the phone on file at 65, authorised by the code just verified) is never asked for a solution
 * its caller could not send.
 */
function takesChallenge(action: Action): boolean {
  let takes = challengeTakers.get(action);
  if (takes === undefined)
    challengeTakers.set(
      action,
      (takes = (action.request as { shape?: Record<string, unknown> }).shape?.challenge !== undefined),
    );
  return takes;
}

/**
 * The known action an unknown name most likely meant (`felogin`, `otp_genrate`, `verify-otp`):
 * the nearest by edit distance, ignoring case and `-`/`_`, when it is near enough to be a typo.
 */
function closestAction(name: string, actions: ReadonlyMap<string, Action>): string | undefined {
  const plain = (text: string) => text.toLowerCase().replace(/[-_]/g, '');
  const given = plain(name.slice(0, 64));
  const known = [...actions.keys()];
  const best = closest(given, known.map(plain));
  const index = known.map(plain).indexOf(best);
  return index >= 0 && distance(given, best) <= Math.max(1, Math.floor(best.length / 4)) ? known[index] : undefined;
}

/** An answer reduced for this caller (`meta.limited`): the provider's reply would show what it left out. */
const trimmed = (extra: Record<string, unknown> | undefined): boolean =>
  (extra?.meta as { limited?: unknown } | undefined)?.limited === true;

/**
 * `idp_debug` (docs/contract.md#addressing-and-envelope, only when `debug` is on): the identity exchanges of this request,
 * masked by the client. One exchange: `idp_debug` is it; several: `idp_debug` is the last and
 * `idp_debugs` lists them all.
 */
function idpDebugFields(exchanges: ReadonlyArray<Record<string, unknown>>): Record<string, unknown> {
  if (exchanges.length === 0) return {};
  const last = exchanges[exchanges.length - 1];
  return exchanges.length === 1 ? { idp_debug: last } : { idp_debug: last, idp_debugs: [...exchanges] };
}
