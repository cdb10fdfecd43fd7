import type { Logger } from './logger';

/*
 * One request as every layer below the transport sees it. It is passed explicitly, from the
 * front controller to the action, the flow runner, the domain and the clients, so a reader (and
 * a profiler) can follow a request from the door to the upstream call.
 */

/** One line of the `debug` array: a flow step passed, an effect called, an upstream call made. */
export interface TraceEntry {
  step: string;
  [detail: string]: unknown;
}

export interface TokenCookieOptions {
  stayLoggedIn: boolean;
  /** Seconds, from the provider's token reply when it says. */
  expiresIn?: number | null;
}

/** The `__utp` cookie as lower layers use it; its attributes (Secure, SameSite, domain) are the transport's. */
export interface TokenCookie {
  get(): string | undefined;
  set(token: string, options: TokenCookieOptions): void;
}

export interface RequestContext {
  requestId: string;
  /** The client IP (honours `server.trust_proxy`), for per-IP limits. */
  ip: string;
  log: Logger;
  /** A request header, lower-case name. */
  header(name: string): string | undefined;
  tokenCookie: TokenCookie;
  /** Steps and upstream calls of this request, returned as `debug` when `debug` is on. */
  trace: TraceEntry[];
}
