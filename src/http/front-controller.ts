import type { Context } from 'koa';
import type { Action, ActionContext, TraceEntry } from '../actions/action';
import type { Deps } from '../domain/deps';
import { ApiError } from '../core/errors';
import { tokenCookieOf } from './cookies';
import { successEnvelope } from './envelope';
import { checkBodyShape, parseRequest } from './validate';
import { requestScope } from '../core/request-scope';

const ACTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** SPEC.md, Addressing 1: `POST /?action=X` and `POST /X` are the same call. */
export function actionName(ctx: Context): string | undefined {
  if (ctx.path.length > 1) return ctx.path.slice(1);
  // Read straight from the query string: Koa's ctx.query parses every parameter into an object first.
  const querystring = ctx.querystring;
  if (querystring === '') return undefined;
  const values = new URLSearchParams(querystring).getAll('action');
  // A repeated parameter is an array in ctx.query: no action name, as before.
  return values.length === 1 ? values[0] : undefined;
}

export function createFrontController(deps: Deps, actions: ReadonlyMap<string, Action>) {
  return async function frontController(ctx: Context): Promise<void> {
    const name = actionName(ctx);
    const action = name && ACTION_NAME.test(name) ? actions.get(name) : undefined;
    ctx.state.action = action?.name ?? 'unknown';
    if (!action) {
      throw new ApiError('unknown_action', 'Azione sconosciuta.', { status: 404, data: { action: name?.slice(0, 64) ?? null } });
    }
    const body = ctx.request.body ?? {};
    checkBodyShape(body);
    const input = parseRequest(action.request, body);
    const trace: TraceEntry[] = [];
    const actionCtx: ActionContext = {
      deps,
      requestId: ctx.state.requestId as string,
      ip: ctx.ip,
      // A getter: the request's child logger is only made when a handler logs.
      get log() {
        return ctx.state.log;
      },
      header: (header) => ctx.get(header) || undefined,
      tokenCookie: tokenCookieOf(ctx, deps.config),
      trace,
    };
    const result = await requestScope.run({ requestId: actionCtx.requestId, ip: actionCtx.ip, trace }, () => action.handler(input, actionCtx));
    ctx.status = 200;
    if (result.body !== undefined) {
      ctx.body = result.body;
      return;
    }
    const extra = { ...result.extra };
    if (deps.config.debug && trace.length > 0) extra.debug = trace;
    ctx.body = successEnvelope(result.data ?? null, extra);
  };
}
