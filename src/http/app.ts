import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import cors from '@koa/cors';
import { bodyParser } from '@koa/bodyparser';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../domain/deps';
import { diagnosticsCaller } from '../domain/guard';
import { storeUnavailable } from '../domain/otp/errors';
import { weakenedDefences } from '../core/config/weakened';
import { configWarnings } from '../core/config/warnings';
import type { Environment } from '../core/config/load';
import type { Logger } from '../core/logger';
import { actionsByName } from '../actions';
import type { Action } from '../actions/action';
import { apiError, type ApiError, isApiError, methodNotAllowed } from '../core/errors';
import { failureEnvelope } from './envelope';
import { createFrontController, namesActionInQuery } from './front-controller';
import { actionLabel } from '../core/metrics';
import { declareFunnelSeries } from '../domain/funnel/series';
import { createOpenApiDocument, type OpenApiDocument } from './openapi';
import { actionsWithLocaleField, createLocaleResolver } from './locale';
import { createSmsRoutes } from './sms-routes';
import { clientAddress } from './client-address';
import { checkKeys, keysOf, metricsTokenHeld } from './keys';
import { endRequestSpan, startRequestSpan } from './request-span';
import type { Span } from '../core/tracing';

const REQUEST_ID = /^[\w.-]{1,64}$/;

export interface AppOptions {
  /** Replaces the registered actions; tests use it to exercise the controller alone. */
  actions?: ReadonlyMap<string, Action>;
  /** Extra GET routes (sandbox outbox, metrics, demo page). */
  routes?: (router: Router) => void;
  /**
   * The environment the configuration was judged for (/readyz's warnings speak of it). Unnamed,
   * an app with the sandbox is not production (production refuses it) and one without is.
   */
  environment?: Environment;
}

/** zlib and brotli refusing the bytes: a body that is not encoded as its Content-Encoding says. */
const isDecodingError = (err: { code?: unknown }) => typeof err.code === 'string' && /^(Z_|ERR__ERROR_)/.test(err.code);

/**
 * Maps any error to the envelope: ApiErrors as declared, body-reading errors (raw-body, inflation,
 * co-body) by status, the rest as 500 without a stack.
 */
function toApiError(err: unknown, requestId: string): ApiError {
  if (isApiError(err)) return err;
  const e = (err ?? {}) as { status?: number; statusCode?: number; code?: unknown };
  const status = e.status ?? e.statusCode;
  if (status === 413) return apiError('payload_too_large');
  // inflation: a Content-Encoding other than gzip, deflate, br or identity.
  if (status === 415) return apiError('unsupported_media_type');
  // Without a status the decoder's error would be a 500, yet the fault is the client's body.
  // The parser refuses a `__proto__` key (JSON.parse would make it an own key that merging turns into a prototype): named, so the 400 says why.
  if (status === 400 && e instanceof Error && /prototype property/.test(e.message))
    return apiError('malformed_json', { data: { issues: [{ path: '__proto__', message: PROTO_KEY_REFUSED }] } });
  if (isDecodingError(e) || status === 400) return apiError('malformed_json');
  return apiError('internal_error', { data: { request_id: requestId } });
}

/** Why valid JSON with a `__proto__` key is answered malformed_json (docs/decisions.md). */
const PROTO_KEY_REFUSED = 'key __proto__ not allowed: it would set an object prototype';

/** Answers a failure: the error's status and headers, and its envelope (its text in `locale`). */
function answerFailure(ctx: Context, err: ApiError, locale?: string): void {
  ctx.status = err.status;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.body = failureEnvelope(err, locale);
}

/*
 * Only JSON bodies reach an action. text/plain, application/x-www-form-urlencoded and
 * multipart/form-data (and a body with no Content-Type, as a typeless Blob sends) are what a
 * page on another origin may make a visitor's browser POST without a CORS preflight: were they
 * parsed, such a page could send codes to any phone in the visitor's name.
 */
const JSON_TYPES = ['application/json', 'application/*+json'];

/** No Content-Length (or 0) and no Transfer-Encoding: nothing to type-check, and the request is `{}`. */
const hasBody = (ctx: Context) =>
  ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.req.headers['content-length']) > 0;

async function serveMetrics(ctx: Context, deps: Deps): Promise<void> {
  // A scrape that accepts OpenMetrics (Prometheus with exemplar storage) gets it where there are exemplars to give.
  const open = deps.metrics.openMetrics;
  if (open && ctx.get('accept').includes('application/openmetrics-text')) {
    ctx.body = await open.render();
    ctx.set('Content-Type', open.contentType);
    return;
  }
  ctx.body = await deps.metrics.render();
  ctx.set('Content-Type', deps.metrics.contentType);
}

/**
 * `ctx.state` of a request: its id, and its child logger made on first use (a class getter,
 * so no closure or property definition per request). Koa's `ctx.state` is a plain bag: the
 * action name, reason and outcome are set on it as before.
 */
class RequestState {
  [key: string]: unknown;
  #log: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    readonly requestId: string,
    /** The request's span when it is traced: its log lines name it. */
    readonly span?: Span,
  ) {}

  get log(): Logger {
    const { span } = this;
    return (this.#log ??= this.parent.child(
      span
        ? { request_id: this.requestId, trace_id: span.traceId, span_id: span.spanId }
        : { request_id: this.requestId },
    ));
  }
}

export function createApp(deps: Deps, options: AppOptions = {}): Koa {
  const { config } = deps;
  const { trust_proxy_hops: hops, forwarded_header: forwardedHeader } = config.server;
  // Behind proxies Koa reads X-Forwarded-Proto and -Host; the client's address is ours (below), not Koa's first entry.
  const app = new Koa({ proxy: hops > 0 });
  // Koa prints errors itself when nobody listens; ours are already logged once, with the request id.
  app.silent = true;
  if (hops > 0) {
    app.use(function clientBehindProxies(ctx: Context, next: Next) {
      ctx.request.ip = clientAddress(
        ctx.get(forwardedHeader) || undefined,
        forwardedHeader,
        hops,
        ctx.req.socket.remoteAddress ?? '',
      );
      return next();
    });
  }
  const actions = options.actions ?? actionsByName;
  // A stand-in OTP service (a test's) may list no languages: then only the default is offered.
  const locales = (deps.otp.locales as readonly string[] | undefined) ?? [config.mail.default_locale];
  const localeOf = createLocaleResolver(locales, config.mail.default_locale, actionsWithLocaleField(actions.values()));

  app.use(deps.metrics.middleware);
  // Every action's series from 0, and the GET endpoints that answer the service's own failures (readiness).
  deps.metrics.declareActions([...actions.keys(), '/healthz', '/readyz']);
  if (config.funnel.enabled)
    declareFunnelSeries(deps.metrics).catch((err: unknown) =>
      deps.log.warn({ err: { message: err instanceof Error ? err.message : 'error' } }, 'funnel: series not declared'),
    );
  app.use(async function requestScope(ctx: Context, next: Next) {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const span = deps.tracing && startRequestSpan(deps.tracing, ctx, hops > 0);
    // The request's logger is made on first use: most requests log nothing at warn level, and a child logger costs.
    ctx.state = new RequestState(deps.log, requestId, span);
    ctx.set('x-request-id', requestId);
    // Answers carry tokens, proofs and profiles: no cache keeps them, no browser reads them as anything but their type.
    // A page or asset that is the same for everyone may set its own caching after this.
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
    } catch (err) {
      const failure = toApiError(err, requestId);
      if (failure.status >= 500) ctx.state.log.error({ err }, 'unhandled error');
      answerFailure(ctx, failure, localeOf(ctx));
      ctx.state.reason = failure.reason;
      // A client refused by a limit or for a wrong key is asked to prove work before its next send (challenge.mode adaptive).
      if (failure.reason === 'rate_limited') deps.challenge?.refused(ctx.ip).catch(() => {});
    }
    ctx.state.outcome = ctx.state.reason ?? (isFailure(ctx.body) ? failureReason(ctx.body) : 'ok');
    if (span) endRequestSpan(span, ctx, ctx.state.outcome as string);
    if (!deps.log.isLevelEnabled('info')) return;
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    // The path of an unknown action is whatever the client typed (a phone, a token): not logged.
    const path = actionLabel(ctx) === 'unknown' ? undefined : ctx.path;
    ctx.state.log.info(
      {
        method: ctx.method,
        path,
        action: ctx.state.action,
        status: ctx.status,
        reason: ctx.state.outcome,
        duration_ms: Math.round(durationMs * 10) / 10,
      },
      'request',
    );
  });

  const corsHeaders = cors({
    origin: (ctx) => (config.server.cors_origins.includes(ctx.get('origin')) ? ctx.get('origin') : ''),
    credentials: true,
  });
  app.use(function corsWhenOrigin(ctx: Context, next: Next) {
    // Without an Origin header @koa/cors only adds `Vary: Origin`; doing just that here spares it on most requests.
    if (ctx.get('origin') !== '') return corsHeaders(ctx, next);
    ctx.vary('Origin');
    return next();
  });

  // Before every route and action: a key guessed anywhere counts, and a locked-out client is refused everywhere.
  app.use(checkKeys(deps));

  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { success: true, error: null, data: { status: 'up' } };
  });
  const unsafe = weakenedDefences(config);
  const warnings = configWarnings(
    config,
    options.environment ?? (config.sandbox.enabled ? 'development' : 'production'),
  );
  router.get('/readyz', async (ctx) => {
    // With Retry-After, as every store_unavailable: a balancer or a client knows when to ask again.
    const ready = await deps.ready().catch((err: unknown) => err);
    if (ready !== true) return answerFailure(ctx, storeUnavailable(ready === false ? undefined : ready));
    // What this instance runs without, for an operator: which defences are off is a map for anyone else.
    const operator = diagnosticsCaller({ deps, keys: keysOf(ctx) });
    ctx.body = {
      success: true,
      error: null,
      data: operator ? { status: 'ready', unsafe, warnings } : { status: 'ready' },
    };
  });
  router.get('/metrics', async (ctx) => {
    // Metrics name actions, upstreams and refusal rates: not for whoever reaches the public port.
    // Without a token they are only on the metrics listener (src/service.ts), if anywhere.
    // What it is and how to turn it on: no metric is there to reveal.
    if (!config.metrics.token)
      throw apiError('metrics_not_enabled', { data: { keys: ['metrics.token', 'metrics.port'] } });
    if (!(await metricsTokenHeld(deps, ctx))) {
      throw apiError('unauthorized', { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    await serveMetrics(ctx, deps);
  });
  let openapi: OpenApiDocument | undefined;
  router.get('/openapi.json', (ctx) => {
    openapi ??= createOpenApiDocument([...actions.values()]);
    ctx.body = openapi;
  });
  options.routes?.(router);
  const routes = router.routes();
  // The routes are GET endpoints: other requests (every action call) skip matching them, and so
  // does `/?action=FeLogin`, an action's address whatever the method (GET answers 405 like
  // `GET /FeLogin`, not the page the sandbox serves on `/`).
  const getOnly = router.stack.every((layer) => layer.methods.every((method) => method === 'GET' || method === 'HEAD'));
  app.use(function getRoutes(ctx: Context, next: Next) {
    const skip = (getOnly && ctx.method !== 'GET' && ctx.method !== 'HEAD') || namesActionInQuery(ctx);
    return skip ? next() : routes(ctx as Parameters<typeof routes>[0], next);
  });

  // Before the actions: receipts are form posts to a path of their own, which the actions' rules (JSON only, one segment) would refuse.
  app.use(createSmsRoutes(deps));

  const frontController = createFrontController(deps, actions, localeOf);
  const parseJson = bodyParser({
    enableTypes: ['json'],
    // The parser must take every type the check below lets through (its defaults lack `+json`);
    // extendTypes is merged index by index into those defaults, so the whole list is given.
    extendTypes: { json: JSON_TYPES },
    jsonLimit: config.server.body_limit,
    jsonStrict: true,
  });
  // Whether a Content-Type is JSON, by the header's text: type-is parses the header and matches
  // it against each type on every call, and a client sends the same few texts. The text is the
  // client's, so the answers kept are few (emptied when full).
  const jsonTypes = new Map<string, boolean>();
  const isJson = (ctx: Context): boolean => {
    const header = ctx.get('content-type');
    let json = jsonTypes.get(header);
    if (json === undefined) {
      json = ctx.is(JSON_TYPES) !== false;
      if (jsonTypes.size >= 64) jsonTypes.clear();
      jsonTypes.set(header, json);
    }
    return json;
  };
  app.use(async function actions(ctx: Context, next: Next) {
    const allow = allowedMethods(router, ctx);
    if (!allow.includes(ctx.method)) throw methodNotAllowed(allow);
    if (ctx.path.indexOf('/', 1) !== -1) {
      throw apiError('unknown_action');
    }
    if (!hasBody(ctx)) {
      ctx.request.body = {};
      await frontController(ctx);
    } else if (!isJson(ctx)) {
      throw apiError('unsupported_media_type');
    } else {
      await parseJson(ctx, async () => frontController(ctx));
    }
    await next();
  });

  return app;
}

const ACTION_METHODS = ['POST'] as const;

/**
 * The methods the resource at a request's path takes (its 405's Allow header): a route's own
 * (GET and HEAD for /healthz, /readyz, /metrics, /openapi.json), POST for an action's address
 * (any other one-segment path, and `/?action=`), and both on `/` where a page is mounted there.
 * A path nothing serves is the actions' (one segment) or unknown: it is answered POST, as before.
 */
function allowedMethods(router: Router, ctx: Context): readonly string[] {
  if (namesActionInQuery(ctx)) return ACTION_METHODS;
  const routed = router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods);
  if (routed.length === 0) return ACTION_METHODS;
  const methods = new Set(routed);
  if (ctx.path === '/') methods.add('POST');
  return [...methods].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b));
}
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const isFailure = (body: unknown): body is { success: false; data?: { reason?: string } } =>
  typeof body === 'object' && body !== null && (body as { success?: unknown }).success === false;
const failureReason = (body: { data?: { reason?: string } }) => body.data?.reason ?? 'failed';

/**
 * The metrics listener's app (`metrics.port`): GET /metrics without a token, because only the
 * scrape network reaches `metrics.host`; every other request is a 404.
 */
export function createMetricsApp(deps: Deps): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(async function metricsOnly(ctx: Context) {
    if (ctx.path === '/metrics' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      try {
        await serveMetrics(ctx, deps);
      } catch (err) {
        deps.log.error({ err }, 'cannot render metrics');
        answerFailure(ctx, apiError('internal_error'));
      }
      return;
    }
    answerFailure(ctx, apiError('unknown_action'));
  });
  return app;
}
