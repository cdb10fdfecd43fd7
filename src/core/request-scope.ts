import { AsyncLocalStorage } from 'node:async_hooks';
import type { TraceEntry } from './context';

/**
 * What belongs to the request being served, reachable from clients without threading it
 * through every call: the request id for upstream log lines and the debug trace.
 */
export interface RequestScope {
  requestId: string;
  /** The client IP (Koa's ctx.ip: honours `server.trust_proxy`), for per-IP abuse limits. */
  ip?: string;
  trace: TraceEntry[];
}

export const requestScope = new AsyncLocalStorage<RequestScope>();
