import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Span as OtelSpan,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Config } from './config/schema';

/*
 * OpenTelemetry traces (docs/operations.md, "Traces"): one trace per request, a span for its
 * action and one per upstream call, exported over OTLP/HTTP (protobuf). Off unless
 * `tracing.enabled`: then nothing here is made, and a request only checks that `ctx.span` is
 * absent.
 *
 * Spans are made with explicit parents, from the `span` a request's context carries, rather than
 * through OpenTelemetry's context manager: the service already passes one context from the door to
 * the upstream call (src/core/context.ts), and the context manager's AsyncLocalStorage would cost
 * every request something whether or not it is traced.
 *
 * What a span may say: names and attributes are from bounded sets (actions, upstream endpoints,
 * providers, flows, steps, reasons, status classes), never a phone, an email, a uid, a code, a
 * proof, a token or a key (test/ops/tracing.test.ts scans every exported span for them).
 */

type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  /** Whether the trace is kept (sampled): only a kept trace can be linked to. */
  readonly sampled: boolean;
  /** A span under this one: an upstream call (`client`) or a piece of the request's own work. */
  child(name: string, attributes?: SpanAttributes, kind?: 'client' | 'internal'): Span;
  set(attributes: SpanAttributes): void;
  /** Marks the span failed, with a reason code (never a message that could quote input). */
  fail(reason: string): void;
  rename(name: string): void;
  /** The W3C `traceparent` naming this span: the header an upstream call carries. */
  traceparent(): string;
  end(): void;
}

export interface Tracing {
  /**
   * A request's span. `traceparent` is the caller's, continued only when the caller is ours to
   * trust (the service behind `server.trust_proxy_hops` proxies): a trace id from the open
   * internet would let anyone join or flood an operator's traces.
   */
  startRequest(name: string, traceparent: string | undefined, attributes: SpanAttributes): Span;
  /** Sends what is buffered (tests, shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;

class TracedSpan implements Span {
  constructor(
    private readonly tracer: Tracer,
    private readonly span: OtelSpan,
  ) {}

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  get sampled(): boolean {
    return (this.span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
  }

  child(name: string, attributes?: SpanAttributes, kind: 'client' | 'internal' = 'internal'): Span {
    const parent = trace.setSpan(ROOT_CONTEXT, this.span);
    return new TracedSpan(this.tracer, this.tracer.startSpan(name, { kind: KINDS[kind], attributes }, parent));
  }

  set(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }

  fail(reason: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  traceparent(): string {
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    return `00-${traceId}-${spanId}-${traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
  }

  end(): void {
    this.span.end();
  }
}

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};

/**
 * The exporter's URL: `tracing.otlp_url`, else the standard variables the exporter reads itself
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`), else its default,
 * http://localhost:4318/v1/traces.
 */
export function createTracing(config: Config['tracing']): Tracing | undefined {
  if (!config.enabled) return undefined;
  // Loaded only when tracing is on: the exporter, its protobuf and the SDK take about a second of
  // CPU to load, which every start and every test that builds the app would pay for nothing. A
  // require, not import(): the build is CommonJS, and Jest runs CommonJS without its ESM loader.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const exporter = new OTLPTraceExporter(config.otlp_url ? { url: config.otlp_url } : {});
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.service_name }),
    // A caller's decision is kept (its trace is whole or absent); a new trace is kept at the ratio.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sample_ratio) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('login-frontend-api');
  return {
    startRequest(name, traceparent, attributes) {
      const parent = traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent }, headerGetter) : ROOT_CONTEXT;
      return new TracedSpan(tracer, tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent));
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
