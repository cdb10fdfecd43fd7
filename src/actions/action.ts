import type { z } from 'zod';
import type { ServiceContext } from '../domain/deps';
import type { FlowRunner } from '../flows/run-flow-action';
import type { Reason } from '../core/errors';

/** What a handler may read of the HTTP request, the dependencies it may call, and the journey runner. */
export interface ActionContext extends ServiceContext {
  flows: FlowRunner;
}
export type { TraceEntry } from '../core/context';

export interface ActionResult {
  data?: Record<string, unknown> | null;
  /** Top-level envelope fields beside data: `meta`, `payload`, `idp_debug`, ... */
  extra?: Record<string, unknown>;
  /** Replaces the whole envelope (the non-debug `recommendations` answer, docs/contract.md#addressing-and-envelope). */
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
  /**
   * Rules of the request the JSON Schema cannot state (they depend on a proof, a header, the
   * configuration or the flow's step): named in the operation's description, each with the
   * reason it is answered with (issue 47).
   */
  rules?: readonly string[];
  /** The `data.reason` codes this action may answer besides `invalid_request` and `upstream_error`. */
  reasons?: readonly Reason[];
  handler(input: z.infer<S>, ctx: ActionContext): Promise<ActionResult>;
}

/** Keeps the schema's inferred type flowing into the handler. */
export const defineAction = <S extends z.ZodType>(action: Action<S>): Action<S> => action;
