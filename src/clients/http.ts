import axios, { type AxiosRequestConfig } from 'axios';
import http from 'node:http';
import https from 'node:https';
import type { z } from 'zod';
import { apiError } from '../core/errors';
import type { CallContext } from '../core/context';
import type { Logger } from '../core/logger';
import type { UpstreamCall } from '../core/metrics';
import type { Span } from '../core/tracing';
import { upstreamAdapter } from './http-adapter';

/*
 * The one place that speaks HTTP upstream. Every client builds on `createUpstream`: a
 * keep-alive axios instance with a timeout, a zod guard for the reply, one log line and one
 * observation per call (metrics subscribe), and every failure turned into an ApiError with
 * reason `upstream_error`. Nothing outside src/clients sees axios.
 */

export type { UpstreamCall };

/** Told of every upstream call (the metrics count them). */
type UpstreamObserver = (call: UpstreamCall) => void;
/** Told of an upstream and its endpoints when it is made: the metrics start their series at 0. */
type UpstreamDeclarer = (client: string, endpoints: readonly string[]) => void;

export interface UpstreamRequest<T> {
  /** A stable name for logs and metrics, never the URL (queries may hold keys). */
  endpoint: string;
  method: 'GET' | 'POST';
  url: string;
  params?: Record<string, string | number | boolean | undefined>;
  /** JSON body, or form-urlencoded when `form` is set. */
  json?: unknown;
  form?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Guard of the reply body; a reply that does not parse is an upstream error. */
  reply?: z.ZodType<T>;
  /** Per-call timeout override in ms. */
  timeoutMs?: number;
  /** Accept these non-2xx statuses as answers instead of errors (e.g. 404 "not found"). */
  acceptStatus?: number[];
}

/** What every client factory takes beside the configuration and the logger. */
export interface ClientOptions {
  /** Told of every upstream call (metrics). */
  observe?: UpstreamObserver;
  /** Told of each upstream made, with its endpoints (metrics). */
  declare?: UpstreamDeclarer;
  /** A prepared upstream instead of a new one (tests). */
  upstream?: Upstream;
}

export interface UpstreamResponse<T> {
  status: number;
  data: T;
  durationMs: number;
}

export interface Upstream {
  readonly name: string;
  /** One call on behalf of `ctx` (its request id in the log line, the call in its trace). */
  call<T = unknown>(ctx: CallContext, request: UpstreamRequest<T>): Promise<UpstreamResponse<T>>;
}

export interface UpstreamOptions {
  name: string;
  /** Human name for the error text ("provider di identità"). */
  label: string;
  timeoutMs: number;
  log: Logger;
  observe?: UpstreamObserver;
  /** Every `endpoint` this upstream's calls name, declared when it is made (declare). */
  endpoints?: readonly string[];
  declare?: UpstreamDeclarer;
  /**
   * The transport under axios: this module's adapter (src/clients/http-adapter.ts), or axios's
   * own http adapter, which the benchmark keeps as a reference for what the choice saved.
   */
  transport?: 'upstream' | 'axios-http';
}

/** Kept-alive connections, at most this many to one upstream host at once (the rest wait in the agent's queue). */
const MAX_SOCKETS = 128;
/**
 * TCP keep-alive probes after a minute idle: the delay axios's adapter sets on the socket of
 * every request. The agent sets its own when it parks the socket; a socket told two different
 * delays in turn pays four setsockopt calls for each, twice per request, where one delay costs
 * them once per connection.
 */
const TCP_KEEPALIVE_MS = 60_000;
/**
 * An idle pooled connection is closed by us after this long, before an upstream's own idle
 * timeout does it (Node's server default is 5 s; nginx 75 s, load balancers 60 s): a request
 * written on a socket the upstream is closing at that instant fails with ECONNRESET, and a
 * POST cannot be sent again. Seen once in the soak under load, a registration's token call.
 */
const IDLE_SOCKET_MS = 4_000;

/** The body is read as text and parsed here, so a non-JSON reply is a clear `bad_reply`. */
const passThrough = (body: unknown) => body;
const anyStatus = () => true;

/**
 * Whether the environment names a proxy (axios's own variables: `<protocol>_proxy`, `all_proxy`,
 * either case). Without one, axios is told so once (`proxy: false`) instead of reading the
 * environment and parsing the URL for it on every call; with one, axios keeps doing that.
 */
const PROXY_VARIABLES = ['http_proxy', 'https_proxy', 'all_proxy'];
const envNamesProxy = (env: NodeJS.ProcessEnv = process.env): boolean =>
  PROXY_VARIABLES.some((name) => Boolean(env[name] || env[name.toUpperCase()]));

/**
 * One axios instance per upstream, configured once (agents, timeout, text replies, no redirects):
 * a call then passes only what differs per request, so axios merges a small config. Bodies are
 * already strings (built below), so axios's request transform passes them through instead of
 * type-checking them and re-parsing a JSON body it would send unchanged. The transport is
 * src/clients/http-adapter.ts: the bytes of axios's http adapter for a third less CPU a call.
 *
 * The instance is axios's Axios class given this configuration alone, not `axios.create`, which
 * folds in the library's defaults: axios merges an instance's defaults into every call, and
 * those add per-method header buckets (merged key by key, case-insensitively), transitional
 * options (validated per call) and browser-only settings. Nothing they hold reaches the wire
 * here: Accept is set below, and the adapter adds its user agent and encodings to every call.
 */
function createInstance(timeoutMs: number, transport: UpstreamOptions['transport']): InstanceType<typeof axios.Axios> {
  return new axios.Axios({
    adapter: transport === 'axios-http' ? 'http' : upstreamAdapter,
    httpAgent: new http.Agent({
      keepAlive: true,
      keepAliveMsecs: TCP_KEEPALIVE_MS,
      maxSockets: MAX_SOCKETS,
      timeout: IDLE_SOCKET_MS,
    }),
    httpsAgent: new https.Agent({
      keepAlive: true,
      keepAliveMsecs: TCP_KEEPALIVE_MS,
      maxSockets: MAX_SOCKETS,
      timeout: IDLE_SOCKET_MS,
    }),
    ...(envNamesProxy() ? {} : { proxy: false as const }),
    timeout: timeoutMs,
    responseType: 'text',
    transformRequest: [passThrough],
    transformResponse: [passThrough],
    validateStatus: anyStatus,
    maxRedirects: 0,
    headers: { Accept: 'application/json' },
  });
}

/** The URL with its query, built here once: axios's own params serialiser costs more than the call's other work. */
function withQuery(url: string, params: UpstreamRequest<unknown>['params']): string {
  if (!params) return url;
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.append(key, String(value));
  const text = query.toString();
  return text === '' ? url : `${url}${url.includes('?') ? '&' : '?'}${text}`;
}

function formBody(form: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(form)) if (value !== undefined) params.append(key, String(value));
  return params.toString();
}

export function createUpstream(options: UpstreamOptions): Upstream {
  const { name, label, log } = options;
  const instance = createInstance(options.timeoutMs, options.transport);
  if (options.endpoints) options.declare?.(name, options.endpoints);

  const failure = (call: UpstreamCall, detail: string, cause?: unknown) =>
    apiError('upstream_error', {
      params: { service: label },
      data: { upstream: name, endpoint: call.endpoint, ...(call.status ? { upstream_status: call.status } : {}) },
      cause: cause ?? new Error(detail),
    });

  const finish = (ctx: CallContext, call: UpstreamCall, span: Span | undefined, detail?: string) => {
    if (span) endCallSpan(span, call);
    ctx.trace?.push({
      step: `${name}.${call.endpoint}`,
      status: call.status,
      outcome: call.outcome,
      duration_ms: call.durationMs,
    });
    const ok = call.outcome === 'ok';
    // The line is built only when the log takes it: most runs log at warn, and most calls succeed.
    if (ok ? log.isLevelEnabled('info') : log.isLevelEnabled('warn')) {
      const line = {
        client: name,
        endpoint: call.endpoint,
        method: call.method,
        status: call.status,
        outcome: call.outcome,
        duration_ms: call.durationMs,
        request_id: ctx.requestId,
        ...(span ? { trace_id: span.traceId, span_id: span.spanId } : {}),
      };
      if (ok) log.info(line, 'upstream call');
      else log.warn({ ...line, detail }, 'upstream call failed');
    }
    options.observe?.(call);
  };

  return {
    name,
    async call<T>(ctx: CallContext, request: UpstreamRequest<T>): Promise<UpstreamResponse<T>> {
      // The body's type before the caller's headers: the order upstreams receive, which
      // test/clients/http-wire.test.ts pins.
      const type = request.form
        ? 'application/x-www-form-urlencoded'
        : request.json !== undefined
          ? 'application/json'
          : undefined;
      const headers: Record<string, string> = type
        ? { 'Content-Type': type, ...request.headers }
        : { ...request.headers };
      // Named after the call, never its URL (queries may hold keys); the upstream's own trace joins through the header.
      const span = ctx.span?.child(`${name}.${request.endpoint}`, { 'lfa.upstream': name }, 'client');
      if (span) headers.traceparent = span.traceparent();
      const config: AxiosRequestConfig = {
        method: request.method,
        url: withQuery(request.url, request.params),
        headers,
      };
      if (request.timeoutMs !== undefined) config.timeout = request.timeoutMs;
      if (request.form) config.data = formBody(request.form);
      else if (request.json !== undefined) config.data = JSON.stringify(request.json);

      const started = performance.now();
      const call: UpstreamCall = {
        client: name,
        endpoint: request.endpoint,
        method: request.method,
        status: 0,
        durationMs: 0,
        outcome: 'ok',
      };
      let response;
      try {
        response = await instance.request<string>(config);
      } catch (err) {
        call.durationMs = Math.round(performance.now() - started);
        const code = (err as { code?: string }).code;
        call.outcome = code === 'ECONNABORTED' || code === 'ETIMEDOUT' ? 'timeout' : 'unreachable';
        finish(ctx, call, span, code ?? (err as Error).message);
        throw failure(call, call.outcome, err);
      }
      call.durationMs = Math.round(performance.now() - started);
      call.status = response.status;
      const accepted =
        (response.status >= 200 && response.status < 300) || request.acceptStatus?.includes(response.status);
      if (!accepted) {
        call.outcome = 'http_error';
        finish(ctx, call, span, `HTTP ${response.status}`);
        throw failure(call, `HTTP ${response.status}`);
      }

      let body: unknown = response.data;
      if (typeof body === 'string' && body.trim() !== '') {
        try {
          body = JSON.parse(body);
        } catch {
          // Not JSON: leave it as text for guards that accept text, or fail below.
        }
      } else if (typeof body === 'string') {
        body = null;
      }
      if (request.reply) {
        const parsed = request.reply.safeParse(body);
        if (!parsed.success) {
          call.outcome = 'bad_reply';
          const detail = parsed.error.issues
            .slice(0, 3)
            .map((i) => `${i.path.join('.')}: ${i.message}`)
            .join('; ');
          finish(ctx, call, span, detail);
          throw failure(call, detail);
        }
        body = parsed.data;
      }
      finish(ctx, call, span);
      return { status: response.status, data: body as T, durationMs: call.durationMs };
    },
  };
}

/** An upstream call's span: its status and outcome (`ok`, `http_error`, `timeout`, ...), failed unless ok. */
function endCallSpan(span: Span, call: UpstreamCall): void {
  span.set({
    'http.request.method': call.method,
    'http.response.status_code': call.status,
    'lfa.upstream.outcome': call.outcome,
    'lfa.duration_ms': call.durationMs,
  });
  if (call.outcome !== 'ok') span.fail(call.outcome);
  span.end();
}
