import type { z } from 'zod';
import type { ParameterizedContext } from 'koa';
import type { Deps } from '../domain/deps';
import type { Logger } from '../core/logger';
import type { Reason } from '../core/errors';

/** What a handler may read of the HTTP request, and the dependencies it may call. */
export interface ActionContext {
  deps: Deps;
  requestId: string;
  ip: string;
  log: Logger;
  /** A request header, lower-case name. */
  header(name: string): string | undefined;
  cookies: ParameterizedContext['cookies'];
  /** Steps and upstream calls of this request, returned as `debug` when `debug` is on. */
  trace: TraceEntry[];
}

export interface TraceEntry {
  step: string;
  [detail: string]: unknown;
}

export interface ActionResult {
  data?: Record<string, unknown> | null;
  /** Top-level envelope fields beside data: `meta`, `payload`, `idp_debug`, ... */
  extra?: Record<string, unknown>;
  /** Replaces the whole envelope (SPEC.md's non-debug `recommendations` answer). */
  body?: unknown;
}

export interface Action<S extends z.ZodType = z.ZodType> {
  name: string;
  /** One line for the OpenAPI description. */
  summary?: string;
  request: S;
  /** Shape of `data` on success, for the OpenAPI description (not enforced at run time). */
  response?: z.ZodType;
  /** The whole answer when the action may replace the envelope (`ActionResult.body`), for the OpenAPI description. */
  bodyResponse?: z.ZodType;
  /** The `data.reason` codes this action may answer besides `invalid_request` and `upstream_error`. */
  reasons?: readonly Reason[];
  handler(input: z.infer<S>, ctx: ActionContext): Promise<ActionResult>;
}

/** Keeps the schema's inferred type flowing into the handler. */
export const defineAction = <S extends z.ZodType>(action: Action<S>): Action<S> => action;
