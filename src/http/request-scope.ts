import { AsyncLocalStorage } from 'node:async_hooks';
import type { TraceEntry } from '../actions/action';

/**
 * What belongs to the request being served, reachable from clients without threading it
 * through every call: the request id for upstream log lines and the debug trace.
 */
export interface RequestScope {
  requestId: string;
  trace: TraceEntry[];
}

export const requestScope = new AsyncLocalStorage<RequestScope>();
