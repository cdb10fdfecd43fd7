import type { Logger } from './logger';
import type { Span } from './tracing';

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

/**
 * What the domain and the clients need of the request they serve: its id for log lines, the
 * client IP for per-IP limits, and where to note upstream calls for `debug` and `idp_debug`.
 * Work that serves no request (the login ingest's deliveries, start-up) passes `background`.
 */
export interface CallContext {
  requestId: string;
  /** The client IP (the connection's, or the one `server.trust_proxy_hops` proxies appended), for per-IP limits. */
  ip?: string;
  /** Steps and upstream calls of this request, returned as `debug` when `debug` is on. */
  trace?: TraceEntry[];
  /** Identity provider exchanges, collected (masked) only when `debug` is on: `idp_debug`. */
  idpExchanges?: Array<Record<string, unknown>>;
  /** The language of what the person reads (code messages, error texts): `it`, `en`...; absent, `mail.default_locale`. */
  readonly locale?: string;
  /**
   * The action this request called (`otp_generate`, `FeLogin`...) when its request takes a bot
   * challenge's solution (a `challenge` field): a solution holds for it only, and a send made
   * without it (another action, work that serves no request) is never asked for one.
   */
  readonly action?: string;
  /** The bot challenge's solution the request carries (its `challenge` field), when it does. */
  readonly challenge?: string;
  /** The span upstream calls and steps are recorded under; absent when the request is not traced (`tracing.enabled`). */
  readonly span?: Span;
}

/**
 * The same request with its calls recorded under `span` (an SMS attempt, under the action's span).
 * A copy of the fields, not an object over `ctx`: a request context's lazy parts (its logger,
 * cookie, keys) stay with the request.
 */
export const withSpan = (ctx: CallContext, span: Span | undefined): CallContext =>
  span
    ? {
        requestId: ctx.requestId,
        ip: ctx.ip,
        trace: ctx.trace,
        idpExchanges: ctx.idpExchanges,
        locale: ctx.locale,
        action: ctx.action,
        challenge: ctx.challenge,
        span,
      }
    : ctx;

/** The context of work that serves no request. */
export const background = (what: string): CallContext => ({ requestId: what });

/** The keys that open internal surfaces: `security.internal_key`, `funnel.read_key`, `metrics.token`. */
export type KeyName = 'internal' | 'funnel' | 'metrics';

/** Which keys a request presented and that held, checked once where the request comes in (src/domain/keys.ts). */
export type PresentedKeys = Readonly<Record<KeyName, boolean>>;

export interface RequestContext extends CallContext {
  ip: string;
  log: Logger;
  /** A request header, lower-case name. */
  header(name: string): string | undefined;
  /** The keys this request presented and that held: the guard reads these, never the headers. */
  readonly keys: PresentedKeys;
  tokenCookie: TokenCookie;
  trace: TraceEntry[];
  /** Resolved on first read: the request's `locale` field where its action has one, else Accept-Language, else the default. */
  readonly locale: string;
}
