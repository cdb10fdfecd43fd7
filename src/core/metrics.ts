import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Context, Middleware, Next } from 'koa';
import type { Config, PhoneChannel } from './config/schema';

/*
 * Prometheus metrics. Each app has its own Registry (tests stay isolated); the process-level
 * default metrics (CPU, memory, event loop, GC) live in one registry per process, because
 * they describe the process, and are appended to every scrape.
 *
 * Every label value is bounded: action names come from the registry (or `unknown`), reasons
 * are the service's own snake_case codes, clients and endpoints are names the code chooses.
 * No path, identifier or address ever becomes a label. The names below are a public
 * interface (dashboards, alerts, docs/operations.md): rename nothing.
 */

/** One upstream call, as the shared upstream base (src/clients/http.ts) reports it to the metrics. */
export interface UpstreamCall {
  client: string;
  endpoint: string;
  method: string;
  /** HTTP status, or 0 when no answer came (timeout, refused, DNS). */
  status: number;
  durationMs: number;
  outcome: 'ok' | 'http_error' | 'bad_reply' | 'timeout' | 'unreachable';
}

export const METRIC_PREFIX = 'lfa_';

export type CodeChannel = 'sms' | 'whatsapp' | 'email';
/** `skipped`: channel not configured; `refused`: number outside `sms.allowed_regions`. */
export type CodeSendResult = 'sent' | 'failed' | 'skipped' | 'refused';
/** `missing`: no pending code for the key. */
export type VerificationResult = 'ok' | 'invalid' | 'expired' | 'too_many_attempts' | 'missing';
/** `failed`: one delivery attempt failed and will be retried; `dropped`: given up, the event is lost. */
export type IngestResult = 'queued' | 'delivered' | 'failed' | 'dropped';
/** The limits of `rate_limits.*`, by their configuration key. */
export type RateLimitName = Exclude<keyof Config['rate_limits'], 'enabled'>;

export interface MetricDefinition {
  name: string;
  type: 'counter' | 'histogram' | 'gauge';
  labels: readonly string[];
  help: string;
}

/** Every metric of the service, in the order docs/operations.md lists them. */
export const metricDefinitions = [
  {
    name: 'lfa_requests_total',
    type: 'counter',
    labels: ['action', 'outcome', 'status'],
    help: 'Requests answered, by action (registered action name, route of a GET endpoint such as /healthz, or unknown), outcome (ok or the data.reason of the answer) and HTTP status.',
  },
  {
    name: 'lfa_request_duration_seconds',
    type: 'histogram',
    labels: ['action', 'outcome'],
    help: 'Time from receiving a request to having its answer ready, by action and outcome.',
  },
  {
    name: 'lfa_upstream_calls_total',
    type: 'counter',
    labels: ['client', 'endpoint', 'status', 'outcome'],
    help: 'Calls to upstream services, by client (identity, sms, collector, ...), endpoint name, HTTP status (0 when no answer came) and outcome (ok, http_error, bad_reply, timeout, unreachable).',
  },
  {
    name: 'lfa_upstream_call_duration_seconds',
    type: 'histogram',
    labels: ['client', 'endpoint', 'outcome'],
    help: 'Duration of upstream calls, by client, endpoint and outcome.',
  },
  {
    name: 'lfa_otp_codes_sent_total',
    type: 'counter',
    labels: ['channel', 'result'],
    help: 'One-time codes handed to a channel, by channel (sms, whatsapp, email) and result (sent, failed, skipped when the channel is not configured, refused when the number is outside sms.allowed_regions).',
  },
  {
    name: 'lfa_otp_verifications_total',
    type: 'counter',
    labels: ['result'],
    help: 'Code verifications, by result (ok, invalid, expired, too_many_attempts, missing when no code is pending for the key).',
  },
  {
    name: 'lfa_ingest_queue_depth',
    type: 'gauge',
    labels: [],
    help: 'Login events waiting for delivery to the user collector.',
  },
  {
    name: 'lfa_ingest_events_total',
    type: 'counter',
    labels: ['result'],
    help: 'Login ingest events, by result (queued, delivered, failed: one attempt failed and will be retried, dropped: retries exhausted, the event is lost).',
  },
  {
    name: 'lfa_rate_limit_refusals_total',
    type: 'counter',
    labels: ['limit'],
    help: 'Requests refused with HTTP 429, by the rate_limits key that refused them.',
  },
  {
    name: 'lfa_sms_sends_total',
    type: 'counter',
    labels: ['provider', 'channel', 'country', 'result'],
    help: 'Code SMS handed to a provider, by provider (sms.providers name), channel (sms, whatsapp), destination country (ISO region) and result (accepted, failed: refused or unreachable, failover: failed and passed to the next provider).',
  },
  {
    name: 'lfa_sms_receipts_total',
    type: 'counter',
    labels: ['provider', 'channel', 'country', 'status'],
    help: 'Delivery receipts recorded, by provider, channel (sms, whatsapp), country and status (delivered, read: a WhatsApp message opened, failed, unknown).',
  },
  {
    name: 'lfa_sms_verified_total',
    type: 'counter',
    labels: ['provider', 'channel', 'country'],
    help: 'Code SMS whose code was then verified, by provider, channel and country: conversion is this over lfa_sms_sends_total{result="accepted"}.',
  },
  {
    name: 'lfa_sms_provider_duration_seconds',
    type: 'histogram',
    labels: ['provider', 'outcome'],
    help: 'Time a provider took to accept or refuse a message, by provider and outcome (accepted, failed).',
  },
  {
    name: 'lfa_sms_breaker_state',
    type: 'gauge',
    labels: ['provider'],
    help: 'Circuit breaker of each SMS provider: 0 closed (in use), 1 open (skipped), 2 half-open (one probe allowed).',
  },
  {
    name: 'lfa_sms_refusals_total',
    type: 'counter',
    labels: ['reason', 'country'],
    help: 'Code SMS refused before any provider was asked, by reason (region_not_allowed, phone_not_mobile, sms_destination_limited, sms_destination_blocked) and country.',
  },
  {
    name: 'lfa_challenge_decisions_total',
    type: 'counter',
    labels: ['decision', 'signal'],
    help: 'Bot challenge decisions before a code or a mail is sent (docs/security.md, "Bot challenge"): challenged (asked, no solution given), solved (a valid, unspent, bound solution let the send go on), failed (a solution refused), by the signal that asked for it (always, client_sends, client_identifiers, client_verify_failures, password_failures, client_refused, range_flagged).',
  },
  {
    name: 'lfa_sms_range_verdicts_total',
    type: 'counter',
    labels: ['verdict', 'country'],
    help: 'What the pumping defence decided about a number range, by verdict (watched: a first finding of unverified codes; blocked; cleared: off watch, its codes verified; unblocked: a block lifted because its codes were verified) and country.',
  },
  {
    name: 'lfa_funnel_requests_total',
    type: 'counter',
    labels: ['journey', 'step', 'outcome'],
    help: 'Requests of the login journeys (Fe* actions), by journey (one of the diagrams of /flows that has the transition, once per such journey; other when none), the step of the screen the user acted on (its state name where it has no number) and outcome (ok or the refusal reason). docs/funnel.md.',
  },
  {
    name: 'lfa_funnel_steps_reached_total',
    type: 'counter',
    labels: ['journey', 'step'],
    help: 'People (journeys, once each across every instance sharing the store) who reached a screen of a login journey, by journey (every diagram of /flows whose path the journey took so far; other when none) and step; the first screen counts who started. Counted when the count is stored. docs/funnel.md.',
  },
  {
    name: 'lfa_funnel_step_seconds',
    type: 'histogram',
    labels: ['journey', 'step'],
    help: 'Time people spent on a screen of a login journey: from the answer that showed it (the time its proof was handed out, or on a code screen without one the time the accepted code was issued) to the request that acted on it.',
  },
] as const satisfies readonly MetricDefinition[];

/** challenged: asked, no solution given; solved: a solution taken; failed: a solution refused. */
export type ChallengeDecision = 'challenged' | 'solved' | 'failed';
export type SmsSendResult = 'accepted' | 'failed' | 'failover';
export type SmsBreakerState = 'closed' | 'open' | 'half_open';

export interface Metrics {
  readonly registry: Registry;
  /** Outermost Koa middleware: one observation per request. */
  readonly middleware: Middleware;
  readonly contentType: string;
  /** The exposition text served at GET /metrics: this app's metrics, then the process's. */
  render(): Promise<string>;
  codeSent(channel: CodeChannel, result: CodeSendResult): void;
  verification(result: VerificationResult): void;
  ingestQueueDepth(depth: number): void;
  ingest(result: IngestResult): void;
  rateLimitRefused(limit: RateLimitName): void;
  /** One upstream call (the clients report each one here). */
  observeUpstream(call: UpstreamCall): void;
  /** One attempt of a code SMS at one provider, and how long the provider took. */
  smsSend(provider: string, country: string, result: SmsSendResult, durationMs: number, channel?: PhoneChannel): void;
  smsReceipt(provider: string, country: string, status: 'delivered' | 'read' | 'failed' | 'unknown', channel?: PhoneChannel): void;
  smsVerified(provider: string, country: string, channel?: PhoneChannel): void;
  smsBreaker(provider: string, state: SmsBreakerState): void;
  smsRefused(reason: string, country: string): void;
  smsRangeVerdict(verdict: 'watched' | 'blocked' | 'cleared' | 'unblocked', country: string): void;
  /** One bot challenge decision and the signal that asked for it (src/domain/limits/challenge.ts). */
  challenge(decision: ChallengeDecision, signal: string): void;
  /** One login-journey request: the screen acted on, its outcome, the time spent on it. */
  funnelRequest(journey: string, step: string, outcome: string, seconds?: number): void;
  /** One person (a journey, counted once by the store) reached a screen. */
  funnelReached(journey: string, step: string): void;
}

/** Time on a screen, seconds: the funnel's own buckets (src/flows/funnel.ts) so both tell the same medians. */
export const SCREEN_SECONDS_BUCKETS = [1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1800, 3600];
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
const LABEL_VALUE = /^[A-Za-z0-9_./-]{1,64}$/;
const REASON = /^[a-z][a-z0-9_]{0,39}$/;

let processRegistry: Registry | undefined;
/** Default metrics start an event-loop monitor that is never stopped: one per process, not one per app. */
function defaultMetricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: METRIC_PREFIX });
  }
  return processRegistry;
}

const definition = (name: (typeof metricDefinitions)[number]['name']) => {
  const found = metricDefinitions.find((d) => d.name === name)!;
  return { name: found.name, help: found.help, labelNames: [...found.labels] };
};

/** The `action` label of a request: bounded whatever the client sent. */
export function actionLabel(ctx: Context): string {
  const action: unknown = ctx.state.action;
  if (typeof action === 'string' && LABEL_VALUE.test(action)) return action;
  // GET endpoints (/healthz, /metrics, ...) are router templates: a fixed set.
  const route = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' && LABEL_VALUE.test(route) ? route : 'unknown';
}

/** The `outcome` label: `ok` or the answer's reason code. */
export function outcomeLabel(ctx: Context): string {
  const outcome: unknown = ctx.state.outcome;
  if (outcome === undefined) return ctx.status < 400 ? 'ok' : 'failed';
  return typeof outcome === 'string' && REASON.test(outcome) ? outcome : 'other';
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const requests = new Counter({ ...definition('lfa_requests_total'), registers: [registry] });
  const requestDuration = new Histogram({ ...definition('lfa_request_duration_seconds'), buckets: REQUEST_BUCKETS, registers: [registry] });
  const upstreamCalls = new Counter({ ...definition('lfa_upstream_calls_total'), registers: [registry] });
  const upstreamDuration = new Histogram({ ...definition('lfa_upstream_call_duration_seconds'), buckets: UPSTREAM_BUCKETS, registers: [registry] });
  const codesSent = new Counter({ ...definition('lfa_otp_codes_sent_total'), registers: [registry] });
  const verifications = new Counter({ ...definition('lfa_otp_verifications_total'), registers: [registry] });
  const queueDepth = new Gauge({ ...definition('lfa_ingest_queue_depth'), registers: [registry] });
  const ingestEvents = new Counter({ ...definition('lfa_ingest_events_total'), registers: [registry] });
  const refusals = new Counter({ ...definition('lfa_rate_limit_refusals_total'), registers: [registry] });
  const smsSends = new Counter({ ...definition('lfa_sms_sends_total'), registers: [registry] });
  const smsReceipts = new Counter({ ...definition('lfa_sms_receipts_total'), registers: [registry] });
  const smsVerified = new Counter({ ...definition('lfa_sms_verified_total'), registers: [registry] });
  const smsDuration = new Histogram({ ...definition('lfa_sms_provider_duration_seconds'), buckets: UPSTREAM_BUCKETS, registers: [registry] });
  const smsBreaker = new Gauge({ ...definition('lfa_sms_breaker_state'), registers: [registry] });
  const smsRefusals = new Counter({ ...definition('lfa_sms_refusals_total'), registers: [registry] });
  const smsRangeVerdicts = new Counter({ ...definition('lfa_sms_range_verdicts_total'), registers: [registry] });
  const challenges = new Counter({ ...definition('lfa_challenge_decisions_total'), registers: [registry] });
  const funnelRequests = new Counter({ ...definition('lfa_funnel_requests_total'), registers: [registry] });
  const funnelReached = new Counter({ ...definition('lfa_funnel_steps_reached_total'), registers: [registry] });
  const funnelSeconds = new Histogram({ ...definition('lfa_funnel_step_seconds'), buckets: SCREEN_SECONDS_BUCKETS, registers: [registry] });
  const funnelChildren = new Map<string, { requests: { inc(): void }; seconds: { observe(value: number): void } }>();
  const funnelReachedChildren = new Map<string, { inc(): void }>();
  const defaults = defaultMetricsRegistry();
  // Provider names are the configuration's slugs and countries ISO regions: bounded, but checked like every label.
  const bounded = (value: string) => (LABEL_VALUE.test(value) ? value : 'other');
  const country = (value: string) => (/^[A-Z]{2}$/.test(value) ? value : 'ZZ');
  const breakerValue = { closed: 0, open: 1, half_open: 2 } as const;

  const observeUpstream = (call: UpstreamCall) => {
    const client = LABEL_VALUE.test(call.client) ? call.client : 'other';
    const endpoint = LABEL_VALUE.test(call.endpoint) ? call.endpoint : 'other';
    upstreamCalls.inc({ client, endpoint, status: String(call.status), outcome: call.outcome });
    upstreamDuration.observe({ client, endpoint, outcome: call.outcome }, call.durationMs / 1000);
  };

  const middleware: Middleware = async function metrics(ctx: Context, next: Next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const action = actionLabel(ctx);
      const outcome = outcomeLabel(ctx);
      requests.inc({ action, outcome, status: String(ctx.status) });
      requestDuration.observe({ action, outcome }, seconds);
    }
  };

  return {
    registry,
    middleware,
    contentType: registry.contentType,
    render: async () => `${await registry.metrics()}\n${await defaults.metrics()}`,
    codeSent: (channel, result) => codesSent.inc({ channel, result }),
    verification: (result) => verifications.inc({ result }),
    ingestQueueDepth: (depth) => queueDepth.set(depth),
    ingest: (result) => ingestEvents.inc({ result }),
    rateLimitRefused: (limit) => refusals.inc({ limit }),
    observeUpstream,
    smsSend(provider, region, result, durationMs, channel = 'sms') {
      smsSends.inc({ provider: bounded(provider), channel, country: country(region), result });
      smsDuration.observe({ provider: bounded(provider), outcome: result === 'accepted' ? 'accepted' : 'failed' }, durationMs / 1000);
    },
    smsReceipt: (provider, region, status, channel = 'sms') => smsReceipts.inc({ provider: bounded(provider), channel, country: country(region), status }),
    smsVerified: (provider, region, channel = 'sms') => smsVerified.inc({ provider: bounded(provider), channel, country: country(region) }),
    smsBreaker: (provider, state) => smsBreaker.set({ provider: bounded(provider) }, breakerValue[state]),
    smsRefused: (reason, region) => smsRefusals.inc({ reason: REASON.test(reason) ? reason : 'other', country: country(region) }),
    smsRangeVerdict: (verdict, region) => smsRangeVerdicts.inc({ verdict, country: country(region) }),
    challenge: (decision, signal) => challenges.inc({ decision, signal }),
    funnelRequest: (journey, step, outcome, seconds) => {
      // The label sets are few (journeys x screens x reasons): their children are kept, so a count is a Map lookup, not a label hash.
      const key = `${journey}|${step}|${outcome}`;
      let child = funnelChildren.get(key);
      if (!child) {
        const label = { journey: bounded(journey), step: bounded(step) };
        child = { requests: funnelRequests.labels({ ...label, outcome: REASON.test(outcome) ? outcome : 'other' }), seconds: funnelSeconds.labels(label) };
        if (funnelChildren.size < 10_000) funnelChildren.set(key, child);
      }
      child.requests.inc();
      if (seconds !== undefined) child.seconds.observe(seconds);
    },
    funnelReached: (journey, step) => {
      const key = `${journey}|${step}`;
      let child = funnelReachedChildren.get(key);
      if (!child) {
        child = funnelReached.labels({ journey: bounded(journey), step: bounded(step) });
        if (funnelReachedChildren.size < 10_000) funnelReachedChildren.set(key, child);
      }
      child.inc();
    },
  };
}
