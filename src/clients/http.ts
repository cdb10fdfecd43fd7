import axios, { type AxiosInstance, type AxiosRequestConfig } from 'axios';
import http from 'node:http';
import https from 'node:https';
import type { z } from 'zod';
import { apiError } from '../core/errors';
import type { CallContext } from '../core/context';
import type { Logger } from '../core/logger';
import type { UpstreamCall } from '../core/metrics';

/*
 * The one place that speaks HTTP upstream. Every client builds on `createUpstream`: a
 * keep-alive axios instance with a timeout, a zod guard for the reply, one log line and one
 * observation per call (metrics subscribe), and every failure turned into an ApiError with
 * reason `upstream_error`. Nothing outside src/clients sees axios.
 */

export type { UpstreamCall };

/** Told of every upstream call (the metrics count them). */
export type UpstreamObserver = (call: UpstreamCall) => void;

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
}

const agents = { httpAgent: new http.Agent({ keepAlive: true }), httpsAgent: new https.Agent({ keepAlive: true }) };

function formBody(form: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(form)) if (value !== undefined) params.append(key, String(value));
  return params.toString();
}

export function createUpstream(options: UpstreamOptions, instance: AxiosInstance = axios.create({ ...agents })): Upstream {
  const { name, label, log } = options;

  const failure = (call: UpstreamCall, detail: string, cause?: unknown) =>
    apiError('upstream_error', {
      params: { service: label },
      data: { upstream: name, endpoint: call.endpoint, ...(call.status ? { upstream_status: call.status } : {}) },
      cause: cause ?? new Error(detail),
    });

  const finish = (ctx: CallContext, call: UpstreamCall, detail?: string) => {
    ctx.trace?.push({ step: `${name}.${call.endpoint}`, status: call.status, outcome: call.outcome, duration_ms: call.durationMs });
    const line = { client: name, endpoint: call.endpoint, method: call.method, status: call.status, outcome: call.outcome, duration_ms: call.durationMs, request_id: ctx.requestId };
    if (call.outcome === 'ok') log.info(line, 'upstream call');
    else log.warn({ ...line, detail }, 'upstream call failed');
    options.observe?.(call);
  };

  return {
    name,
    async call<T>(ctx: CallContext, request: UpstreamRequest<T>): Promise<UpstreamResponse<T>> {
      const config: AxiosRequestConfig = {
        method: request.method,
        url: request.url,
        params: request.params,
        headers: { Accept: 'application/json', ...request.headers },
        timeout: request.timeoutMs ?? options.timeoutMs,
        // Read the body as text and parse it here, so a non-JSON reply is a clear `bad_reply`.
        responseType: 'text',
        transformResponse: (body: unknown) => body,
        validateStatus: () => true,
        maxRedirects: 0,
      };
      if (request.form) {
        config.data = formBody(request.form);
        config.headers = { ...config.headers, 'Content-Type': 'application/x-www-form-urlencoded' };
      } else if (request.json !== undefined) {
        config.data = JSON.stringify(request.json);
        config.headers = { ...config.headers, 'Content-Type': 'application/json' };
      }

      const started = performance.now();
      const call: UpstreamCall = { client: name, endpoint: request.endpoint, method: request.method, status: 0, durationMs: 0, outcome: 'ok' };
      let response;
      try {
        response = await instance.request<string>(config);
      } catch (err) {
        call.durationMs = Math.round(performance.now() - started);
        const code = (err as { code?: string }).code;
        call.outcome = code === 'ECONNABORTED' || code === 'ETIMEDOUT' ? 'timeout' : 'unreachable';
        finish(ctx, call, code ?? (err as Error).message);
        throw failure(call, call.outcome, err);
      }
      call.durationMs = Math.round(performance.now() - started);
      call.status = response.status;
      const accepted = (response.status >= 200 && response.status < 300) || request.acceptStatus?.includes(response.status);
      if (!accepted) {
        call.outcome = 'http_error';
        finish(ctx, call, `HTTP ${response.status}`);
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
          const detail = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
          finish(ctx, call, detail);
          throw failure(call, detail);
        }
        body = parsed.data;
      }
      finish(ctx, call);
      return { status: response.status, data: body as T, durationMs: call.durationMs };
    },
  };
}
