import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type OpenMetricsContentType } from 'prom-client';
import type { Context, Middleware, Next } from 'koa';
import type { Config, PhoneChannel } from './config/schema';
import type { Span } from './tracing';

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
  /** HTTP status, or 0 when no answer came (timeout, refused, DNS): counted as its class (upstreamStatusClass). */
  status: number;
  durationMs: number;
  outcome: 'ok' | 'http_error' | 'bad_reply' | 'timeout' | 'unreachable';
}

export const METRIC_PREFIX = 'lfa_';

/**
 * The `status` label of an upstream call: its class, so the label takes a known set of values
 * and each series can exist at 0 before its first call. 429 stands apart from the other 4xx: it
 * is the upstream refusing load (an error), where a 404 or 401 is an answer.
 */
type UpstreamStatusClass = '2xx' | '3xx' | '4xx' | '429' | '5xx' | 'timeout' | 'network';

function upstreamStatusClass(call: Pick<UpstreamCall, 'status' | 'outcome'>): UpstreamStatusClass {
  if (call.outcome === 'timeout') return 'timeout';
  if (call.outcome === 'unreachable' || call.status === 0) return 'network';
  if (call.status === 429) return '429';
  if (call.status >= 500) return '5xx';
  if (call.status >= 400) return '4xx';
  return call.status >= 300 ? '3xx' : '2xx';
}

const CODE_CHANNELS = ['sms', 'whatsapp', 'email'] as const;
type CodeChannel = (typeof CODE_CHANNELS)[number];
/** `skipped`: channel not configured; `refused`: number outside `sms.allowed_regions`. */
const CODE_SEND_RESULTS = ['sent', 'failed', 'skipped', 'refused'] as const;
type CodeSendResult = (typeof CODE_SEND_RESULTS)[number];
/** The hourly caps of the pumping defence: a country's, and one number range's. */
export type SmsCapScope = 'country' | 'range';
/** `missing`: no pending code for the key. */
const VERIFICATION_RESULTS = ['ok', 'invalid', 'expired', 'too_many_attempts', 'missing'] as const;
type VerificationResult = (typeof VERIFICATION_RESULTS)[number];
/** `failed`: one delivery attempt failed and will be retried; `dropped`: given up, the event is lost. */
const INGEST_RESULTS = ['queued', 'delivered', 'failed', 'dropped'] as const;
export const LOGIN_METHODS = ['code', 'passkey'] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];
type IngestResult = (typeof INGEST_RESULTS)[number];
/** The signals of the bot challenge (src/domain/limits/challenge.ts), the `signal` label of its decisions. */
const CHALLENGE_SIGNALS = [
  'always',
  'client_sends',
  'client_identifiers',
  'client_verify_failures',
  'password_failures',
  'client_refused',
  'network_sends',
  'network_identifiers',
  'network_verify_failures',
  'network_refused',
  'range_flagged',
  'range_rate',
  'country_rate',
  'range_velocity',
  'country_velocity',
] as const;
/** Refusals of a code SMS to a country the service sends to (region_not_allowed names a country outside them). */
const SMS_REFUSAL_REASONS = ['phone_not_mobile', 'sms_destination_limited', 'sms_destination_blocked'] as const;
const RANGE_VERDICTS = ['watched', 'blocked', 'cleared', 'unblocked'] as const;
const RECEIPT_STATUSES = ['delivered', 'read', 'failed', 'unknown'] as const;
/** The answers that are the service's fault (src/core/errors.ts): each action's series of them exists from start. */
const SERVER_FAILURES = [
  ['internal_error', '500'],
  ['store_unavailable', '503'],
] as const;
/** The limits of `rate_limits.*`, by their configuration key. */
type RateLimitName = Exclude<keyof Config['rate_limits'], 'enabled'>;

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
    help: 'Calls to upstream services, by client (identity, sms, collector, ...), endpoint name, status class (2xx, 3xx, 4xx, 429, 5xx; timeout and network when no answer came) and outcome (ok, http_error, bad_reply, timeout, unreachable).',
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
    name: 'lfa_logins_total',
    type: 'counter',
    labels: ['method'],
    help: 'Logins that issued a token, by method: code (an optimised action reaching 90 by a code, a registration or a profile save) or passkey (PasskeyLogin, no code sent). Passkey logins are the SMS and emails saved. docs/passkeys.md.',
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
    labels: ['provider', 'channel'],
    help: 'Circuit breaker of each SMS provider, by provider and channel (sms, whatsapp): 0 closed (in use), 1 open (skipped), 2 half-open (one probe allowed).',
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
    help: 'Bot challenge decisions before a code or a mail is sent (docs/security.md, "Bot challenge"): challenged (asked, no solution given), solved (a valid, unspent, bound solution let the send go on), failed (a solution refused), by the signal that asked for it (always, client_sends, client_identifiers, client_verify_failures, password_failures, client_refused, network_sends, network_identifiers, network_verify_failures, network_refused, range_flagged, range_rate, country_rate, range_velocity, country_velocity).',
  },
  {
    name: 'lfa_sms_cap_reached_total',
    type: 'counter',
    labels: ['scope', 'country'],
    help: 'Hourly SMS caps reached, once per cap and hour, by scope (country: sms.pumping.country_sends_per_hour; range: sms.pumping.prefix_sends_per_hour of one number range) and country. From then to the end of the hour new numbers there are refused; phones with a verified history still get their codes. Starts at 0 for the allowed countries.',
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
    name: 'lfa_funnel_journeys_total',
    type: 'counter',
    labels: ['journey', 'stage'],
    help: 'People who started (left the first screen this way) and completed (reached the end screen the first time) each login journey of /flows, once each across every instance sharing the store; every journey and stage from 0. Completion = completed / started, per journey. docs/funnel.md.',
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
type SmsSendResult = 'accepted' | 'failed' | 'failover';
type SmsBreakerState = 'closed' | 'open' | 'half_open';

export interface Metrics {
  readonly registry: Registry;
  /** Outermost Koa middleware: one observation per request. */
  readonly middleware: Middleware;
  readonly contentType: string;
  /** The exposition text served at GET /metrics: this app's metrics, then the process's. */
  render(): Promise<string>;
  /**
   * The same as OpenMetrics, with the request latency's exemplars (the trace of a request in each
   * bucket), for a scrape that accepts it; present only with tracing on.
   */
  readonly openMetrics?: { readonly contentType: string; render(): Promise<string> };
  codeSent(channel: CodeChannel, result: CodeSendResult): void;
  verification(result: VerificationResult): void;
  ingestQueueDepth(depth: number): void;
  ingest(result: IngestResult): void;
  /** One login that issued a token, by how the person proved it was them. */
  login(method: LoginMethod): void;
  rateLimitRefused(limit: RateLimitName): void;
  /** One upstream call (the clients report each one here). */
  observeUpstream(call: UpstreamCall): void;
  /** One attempt of a code SMS at one provider, and how long the provider took. */
  smsSend(provider: string, country: string, result: SmsSendResult, durationMs: number, channel?: PhoneChannel): void;
  smsReceipt(
    provider: string,
    country: string,
    status: 'delivered' | 'read' | 'failed' | 'unknown',
    channel?: PhoneChannel,
  ): void;
  smsVerified(provider: string, country: string, channel?: PhoneChannel): void;
  /** A provider's breaker; the first call names the provider, whose series then start at 0. */
  smsBreaker(provider: string, state: SmsBreakerState, channel?: PhoneChannel): void;
  smsRefused(reason: string, country: string): void;
  smsRangeVerdict(verdict: 'watched' | 'blocked' | 'cleared' | 'unblocked', country: string): void;
  /** An hourly cap of the pumping defence was reached (pumping.ts); `count: false` only makes the series, at 0. */
  smsCapReached(scope: SmsCapScope, country: string, count?: boolean): void;
  /** One bot challenge decision and the signal that asked for it (src/domain/limits/challenge.ts). */
  challenge(decision: ChallengeDecision, signal: string): void;
  /** One login-journey request: the screen acted on, its outcome, the time spent on it. */
  funnelRequest(journey: string, step: string, outcome: string, seconds?: number): void;
  /** One person (a journey, counted once by the store) reached a screen. */
  funnelReached(journey: string, step: string): void;
  /** Every journey's started and completed series, at 0 until counted. */
  funnelJourneysKnown(journeys: readonly string[]): void;
  /** One person started or completed a journey (counted once by the store). */
  funnelJourney(journey: string, stage: FunnelStage): void;
  /*
   * Series known before their first event, created at 0 so that rate() and increase() count that
   * event (a series' first sample is only a starting point to them). createMetrics(config) does
   * what the configuration bounds; these name what only other layers know.
   */
  /** The registered actions: each one's ok and server-failure series. */
  declareActions(actions: Iterable<string>): void;
  /** An upstream client and its endpoints (src/clients/http.ts): each status class and outcome of each. */
  declareUpstream(client: string, endpoints: readonly string[]): void;
  /** The screens of the login journeys, by journey and step (src/domain/funnel/series.ts). */
  declareFunnel(screens: Iterable<{ journey: string; step: string }>): void;
}

export type FunnelStage = 'started' | 'completed';
const FUNNEL_STAGES: readonly FunnelStage[] = ['started', 'completed'];

/** Time on a screen, seconds: the funnel's own buckets (src/domain/funnel/counting.ts) so both tell the same medians. */
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

function openMetricsRegistry(): Registry {
  const open = new Registry<OpenMetricsContentType>();
  open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  // Metrics take registries typed for the default format; a registry prints either.
  return open as unknown as Registry;
}

/** One OpenMetrics exposition (one `# EOF`): the app's and the process's metrics merged, on the first scrape that asks. */
function openMetricsOf(app: Registry): NonNullable<Metrics['openMetrics']> {
  let merged: Registry | undefined;
  return {
    contentType: Registry.OPENMETRICS_CONTENT_TYPE,
    render: () => (merged ??= Registry.merge([app, defaultOpenMetricsRegistry()])).metrics(),
  };
}

let processOpenRegistry: Registry | undefined;
/** The process's default metrics in OpenMetrics, for a scrape that asks for it (tracing on): made on the first. */
function defaultOpenMetricsRegistry(): Registry {
  if (!processOpenRegistry) {
    processOpenRegistry = openMetricsRegistry();
    collectDefaultMetrics({ register: processOpenRegistry, prefix: METRIC_PREFIX });
  }
  return processOpenRegistry;
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
function outcomeLabel(ctx: Context): string {
  const outcome: unknown = ctx.state.outcome;
  if (outcome === undefined) return ctx.status < 400 ? 'ok' : 'failed';
  return typeof outcome === 'string' && REASON.test(outcome) ? outcome : 'other';
}

/*
 * Counts kept as plain numbers and handed to prom-client when scraped. prom-client hashes a
 * label set into a string and checks every label name on each `inc`/`observe` (its `labels()`
 * children too: they only keep the label object); on a request that is most of what counting
 * costs, and it would happen several times per answer (the request, its upstream calls, the
 * SMS send). Here a label set finds its series through one Map per label, built once per set;
 * the metric's `collect()`, which prom-client runs before rendering, writes the totals back. Series
 * appear in the order they were first counted, as prom-client's own would.
 */

/** The `i`-th of up to four label values: no array of them is made for a count. */
const nth = (i: number, a: string, b: string, c: string, d: string) => (i === 0 ? a : i === 1 ? b : i === 2 ? c : d);

/** The series of one metric by its label values, one Map level per label (no string built per count). */
class SeriesTree<S> {
  private readonly root = new Map<string, unknown>();
  /** Every series, in the order it was first counted. */
  readonly all: Array<{ labels: Record<string, string>; series: S }> = [];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly create: () => S,
  ) {}

  /** The series of these label values, in the metric's label order (the unused trailing ones empty). */
  get(a: string, b = '', c = '', d = ''): S {
    const last = this.labelNames.length - 1;
    let level = this.root;
    for (let i = 0; i < last; i++) {
      let next = level.get(nth(i, a, b, c, d)) as Map<string, unknown> | undefined;
      if (!next) level.set(nth(i, a, b, c, d), (next = new Map()));
      level = next;
    }
    let series = level.get(nth(last, a, b, c, d)) as S | undefined;
    if (series === undefined) {
      series = this.create();
      level.set(nth(last, a, b, c, d), series);
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = nth(i, a, b, c, d)));
      this.all.push({ labels, series });
    }
    return series;
  }
}

interface CountSeries {
  value: number;
}

/** A counter counted in plain numbers: `inc(a, b, ...)` with the label values in the metric's label order. */
function plainCounter(name: (typeof metricDefinitions)[number]['name'], registers: Registry[]) {
  const def = definition(name);
  const tree = new SeriesTree<CountSeries>(def.labelNames, () => ({ value: 0 }));
  new Counter({
    ...def,
    registers,
    collect() {
      this.reset();
      for (const { labels, series } of tree.all) this.inc(labels, series.value);
    },
  });
  const inc = (a: string, b?: string, c?: string, d?: string) => {
    tree.get(a, b, c, d).value += 1;
  };
  /** The series at 0 (unchanged when it exists). */
  const seed = (a: string, b?: string, c?: string, d?: string) => void tree.get(a, b, c, d);
  return Object.assign(inc, { seed });
}

interface HistogramSeries {
  /** Observations per bucket, not cumulative: the last slot holds those above every bound. */
  buckets: number[];
  sum: number;
  count: number;
  /** The last traced observation per bucket (OpenMetrics exemplars), when the histogram keeps them. */
  exemplars?: Array<Exemplar | undefined>;
}

/** As prom-client's Exemplar: what its OpenMetrics output prints after a bucket. */
interface Exemplar {
  labelSet: { trace_id: string };
  value: number;
  /** Seconds since the epoch. */
  timestamp: number;
}

/** How prom-client 15 holds one histogram series (what its `zero()` creates): `collect()` fills it in. */
interface PromHistogramRecord {
  bucketValues: Record<string, number>;
  /** Present when the histogram was made with `enableExemplars`. */
  bucketExemplars?: Record<string, Exemplar | null>;
  sum: number;
  count: number;
}

/** A histogram counted in plain numbers: `observe(value, a, b, ...)`; with `exemplarsIn` (an OpenMetrics registry), `observe.traced(value, traceId, a, b, ...)` too. */
function plainHistogram(
  name: (typeof metricDefinitions)[number]['name'],
  buckets: readonly number[],
  registers: Registry[],
  exemplarsIn?: Registry,
) {
  const def = definition(name);
  const exemplars = exemplarsIn !== undefined;
  const tree = new SeriesTree<HistogramSeries>(def.labelNames, () => ({
    buckets: new Array<number>(buckets.length + 1).fill(0),
    sum: 0,
    count: 0,
  }));
  // prom-client keeps exemplars only in an OpenMetrics registry: that one gets a histogram of its own, from the same counts.
  const plain = registers.filter((registry) => registry !== exemplarsIn);
  const collect = function (this: Histogram) {
    this.reset();
    // zero() is prom-client's own way to start a series; its record is then the last one of the map.
    const records = this as unknown as { hashMap: Record<string, PromHistogramRecord> };
    for (const { labels, series } of tree.all) {
      this.zero(labels);
      const record = Object.values(records.hashMap).at(-1)!;
      buckets.forEach((bound, i) => (record.bucketValues[bound] = series.buckets[i]!));
      record.sum = series.sum;
      record.count = series.count;
      if (record.bucketExemplars && series.exemplars)
        buckets.forEach((bound, i) => (record.bucketExemplars![bound] = series.exemplars![i] ?? null));
    }
  };
  new Histogram({ ...def, buckets: [...buckets], registers: plain, collect });
  if (exemplarsIn)
    new Histogram({ ...def, buckets: [...buckets], registers: [exemplarsIn], enableExemplars: true, collect });
  const seed = (a: string, b?: string, c?: string) => void tree.get(a, b, c);
  /** Counts the value; answers its series and the bucket it fell in. */
  const add = (value: number, a: string, b?: string, c?: string) => {
    // As prom-client's observe(): a value that is no number is a bug of the caller, not a count.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const series = tree.get(a, b, c);
    // The bucket prom-client's observe() would pick: the first bound at or above the value.
    let i = 0;
    while (i < buckets.length && !(value <= buckets[i]!)) i++;
    series.buckets[i]! += 1;
    series.sum += value;
    series.count += 1;
    return { series, i };
  };
  const observe = (value: number, a: string, b?: string, c?: string) => void add(value, a, b, c);
  /** The value, and (above every bound excepted, where prom-client keeps none) the trace it came from. */
  const traced = (value: number, traceId: string, a: string, b?: string, c?: string) => {
    const { series, i } = add(value, a, b, c);
    if (!exemplars || i === buckets.length) return;
    series.exemplars ??= new Array<Exemplar | undefined>(buckets.length);
    series.exemplars[i] = { labelSet: { trace_id: traceId }, value, timestamp: Date.now() / 1000 };
  };
  return Object.assign(observe, { seed, traced });
}

/** The label values the configuration bounds: countries codes go to, the limits that refuse. */
function configuredBounds(config: Config): { countries: string[]; limits: string[] } {
  const countries = new Set<string>();
  for (const region of [
    config.sms.default_region,
    ...config.sms.allowed_regions,
    ...config.sms.providers.flatMap((p) => p.countries),
  ]) {
    const upper = region.trim().toUpperCase();
    if (/^[A-Z]{2}$/.test(upper)) countries.add(upper);
  }
  // The limits are the counts of rate_limits; its windows (`*_seconds`) and switches are not limits.
  const limits = Object.entries(config.rate_limits)
    .filter(([key, value]) => typeof value === 'number' && !key.endsWith('_seconds'))
    .map(([key]) => key);
  return { countries: [...countries], limits };
}

/**
 * The service's metrics. With the configuration, every series whose labels it bounds starts at
 * 0 (results, reasons, channels, countries, limits, signals); providers start when the SMS router
 * names them (smsBreaker), upstreams, actions and journeys when their layers declare them.
 */
export function createMetrics(config?: Config): Metrics {
  const registry = new Registry();
  // With tracing on, the same metrics are also served as OpenMetrics, where the request latency's
  // buckets carry exemplars: the trace of a request that landed there (a slow bucket links to a trace).
  const exemplars = config?.tracing.enabled ?? false;
  const openRegistry = exemplars ? openMetricsRegistry() : undefined;
  const registers = openRegistry ? [registry, openRegistry] : [registry];
  const requests = plainCounter('lfa_requests_total', registers);
  const requestDuration = plainHistogram('lfa_request_duration_seconds', REQUEST_BUCKETS, registers, openRegistry);
  const upstreamCalls = plainCounter('lfa_upstream_calls_total', registers);
  const upstreamDuration = plainHistogram('lfa_upstream_call_duration_seconds', UPSTREAM_BUCKETS, registers);
  const codesSent = plainCounter('lfa_otp_codes_sent_total', registers);
  const verifications = plainCounter('lfa_otp_verifications_total', registers);
  const queueDepth = new Gauge({ ...definition('lfa_ingest_queue_depth'), registers });
  const ingestEvents = plainCounter('lfa_ingest_events_total', registers);
  const logins = plainCounter('lfa_logins_total', registers);
  const refusals = plainCounter('lfa_rate_limit_refusals_total', registers);
  const smsSends = plainCounter('lfa_sms_sends_total', registers);
  const smsReceipts = plainCounter('lfa_sms_receipts_total', registers);
  const smsVerified = plainCounter('lfa_sms_verified_total', registers);
  const smsDuration = plainHistogram('lfa_sms_provider_duration_seconds', UPSTREAM_BUCKETS, registers);
  const smsBreaker = new Gauge({ ...definition('lfa_sms_breaker_state'), registers });
  const smsRefusals = plainCounter('lfa_sms_refusals_total', registers);
  const smsRangeVerdicts = plainCounter('lfa_sms_range_verdicts_total', registers);
  const smsCapsReached = plainCounter('lfa_sms_cap_reached_total', registers);
  const challenges = plainCounter('lfa_challenge_decisions_total', registers);
  const funnelRequests = plainCounter('lfa_funnel_requests_total', registers);
  const funnelReached = plainCounter('lfa_funnel_steps_reached_total', registers);
  const funnelSeconds = plainHistogram('lfa_funnel_step_seconds', SCREEN_SECONDS_BUCKETS, registers);
  const funnelJourneys = plainCounter('lfa_funnel_journeys_total', registers);
  const defaults = defaultMetricsRegistry();
  // Provider names are the configuration's slugs and countries ISO regions: bounded, but checked like every label.
  const bounded = (value: string) => (LABEL_VALUE.test(value) ? value : 'other');
  const country = (value: string) => (/^[A-Z]{2}$/.test(value) ? value : 'ZZ');
  const breakerValue = { closed: 0, open: 1, half_open: 2 } as const;
  const bounds = config ? configuredBounds(config) : { countries: [], limits: [] };
  const declaredProviders = new Set<string>();

  if (config) {
    for (const channel of CODE_CHANNELS) for (const result of CODE_SEND_RESULTS) codesSent.seed(channel, result);
    for (const result of VERIFICATION_RESULTS) verifications.seed(result);
    for (const result of INGEST_RESULTS) ingestEvents.seed(result);
    for (const method of LOGIN_METHODS) logins.seed(method);
    for (const limit of bounds.limits) refusals.seed(limit);
    for (const decision of ['challenged', 'solved', 'failed'] as const)
      for (const signal of CHALLENGE_SIGNALS) challenges.seed(decision, signal);
    for (const region of bounds.countries) {
      for (const reason of SMS_REFUSAL_REASONS) smsRefusals.seed(reason, region);
      for (const verdict of RANGE_VERDICTS) smsRangeVerdicts.seed(verdict, region);
    }
  }

  /** A provider's series at 0, once, when the router names it: every country the service sends to. */
  const declareProvider = (provider: string, channel: PhoneChannel) => {
    const key = `${provider}\n${channel}`;
    if (declaredProviders.has(key)) return;
    declaredProviders.add(key);
    for (const region of bounds.countries) {
      for (const result of ['accepted', 'failed', 'failover'] as const)
        smsSends.seed(provider, channel, region, result);
      for (const status of RECEIPT_STATUSES) smsReceipts.seed(provider, channel, region, status);
      smsVerified.seed(provider, channel, region);
    }
    for (const outcome of ['accepted', 'failed'] as const) smsDuration.seed(provider, outcome);
  };

  const observeUpstream = (call: UpstreamCall) => {
    const client = LABEL_VALUE.test(call.client) ? call.client : 'other';
    const endpoint = LABEL_VALUE.test(call.endpoint) ? call.endpoint : 'other';
    upstreamCalls(client, endpoint, upstreamStatusClass(call), call.outcome);
    upstreamDuration(call.durationMs / 1000, client, endpoint, call.outcome);
  };

  /** The class and outcome pairs a call can end in (upstreamStatusClass): each of an endpoint's series at 0. */
  const UPSTREAM_ENDS = [
    ['2xx', 'ok'],
    ['4xx', 'ok'],
    ['2xx', 'bad_reply'],
    ['4xx', 'http_error'],
    ['429', 'http_error'],
    ['5xx', 'http_error'],
    ['timeout', 'timeout'],
    ['network', 'unreachable'],
  ] as const;
  const declareUpstream = (client: string, endpoints: readonly string[]) => {
    if (!LABEL_VALUE.test(client)) return;
    for (const endpoint of endpoints.filter((e) => LABEL_VALUE.test(e))) {
      for (const [status, outcome] of UPSTREAM_ENDS) upstreamCalls.seed(client, endpoint, status, outcome);
      for (const outcome of ['ok', 'http_error', 'bad_reply', 'timeout', 'unreachable'] as const)
        upstreamDuration.seed(client, endpoint, outcome);
    }
  };

  const middleware: Middleware = async function metrics(ctx: Context, next: Next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const action = actionLabel(ctx);
      const outcome = outcomeLabel(ctx);
      requests(action, outcome, String(ctx.status));
      const span = (ctx.state as { span?: Span }).span;
      if (exemplars && span?.sampled) requestDuration.traced(seconds, span.traceId, action, outcome);
      else requestDuration(seconds, action, outcome);
    }
  };

  return {
    registry,
    middleware,
    contentType: registry.contentType,
    render: async () => `${await registry.metrics()}\n${await defaults.metrics()}`,
    ...(openRegistry ? { openMetrics: openMetricsOf(openRegistry) } : {}),
    codeSent: (channel, result) => codesSent(channel, result),
    verification: (result) => verifications(result),
    ingestQueueDepth: (depth) => queueDepth.set(depth),
    ingest: (result) => ingestEvents(result),
    login: (method) => logins(method),
    rateLimitRefused: (limit) => refusals(limit),
    observeUpstream,
    smsSend(provider, region, result, durationMs, channel = 'sms') {
      smsSends(bounded(provider), channel, country(region), result);
      smsDuration(durationMs / 1000, bounded(provider), result === 'accepted' ? 'accepted' : 'failed');
    },
    smsReceipt: (provider, region, status, channel = 'sms') =>
      smsReceipts(bounded(provider), channel, country(region), status),
    smsVerified: (provider, region, channel = 'sms') => smsVerified(bounded(provider), channel, country(region)),
    smsBreaker: (provider, state, channel = 'sms') => {
      declareProvider(bounded(provider), channel);
      smsBreaker.set({ provider: bounded(provider), channel }, breakerValue[state]);
    },
    smsRefused: (reason, region) => smsRefusals(REASON.test(reason) ? reason : 'other', country(region)),
    smsRangeVerdict: (verdict, region) => smsRangeVerdicts(verdict, country(region)),
    smsCapReached: (scope, region, count = true) =>
      (count ? smsCapsReached : smsCapsReached.seed)(scope, country(region)),
    challenge: (decision, signal) => challenges(decision, signal),
    funnelRequest: (journey, step, outcome, seconds) => {
      funnelRequests(bounded(journey), bounded(step), REASON.test(outcome) ? outcome : 'other');
      if (seconds !== undefined) funnelSeconds(seconds, bounded(journey), bounded(step));
    },
    funnelReached: (journey, step) => funnelReached(bounded(journey), bounded(step)),
    funnelJourneysKnown: (journeys) => {
      for (const journey of journeys) for (const stage of FUNNEL_STAGES) funnelJourneys.seed(bounded(journey), stage);
    },
    funnelJourney: (journey, stage) => funnelJourneys(bounded(journey), stage),
    declareActions(actions) {
      for (const action of actions) {
        if (!LABEL_VALUE.test(action)) continue;
        requests.seed(action, 'ok', '200');
        for (const [reason, status] of SERVER_FAILURES) requests.seed(action, reason, status);
      }
    },
    declareUpstream,
    declareFunnel(screens) {
      for (const { journey, step } of screens) {
        funnelRequests.seed(bounded(journey), bounded(step), 'ok');
        funnelReached.seed(bounded(journey), bounded(step));
        funnelSeconds.seed(bounded(journey), bounded(step));
      }
    },
  };
}
