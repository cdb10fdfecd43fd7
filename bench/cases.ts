import type { LoadKind } from './load';

/*
 * What `npm run bench` measures, and the floors each case is held to (issue 26; the one place
 * they are written in code, docs/performance.md quotes them). Every case is measured paired:
 * in each round its reference runs right before it on the same core, and the case's figure is
 * its app CPU per answer divided by that reference's, the median of the rounds. Paths with
 * upstream calls are read against `ref_node_http_call` (one answer that makes one kept-alive
 * node:http call: the physical shape of such a path), the rest against the bare Koa echo.
 * Each case runs on a fresh instance of its own; its phones (`+393<digit>` + 8 digits) are its
 * own too, as the Redis cases share one redis-server.
 */

type Store = 'memory' | 'redis';
type LogLevel = 'warn' | 'info';

export interface ServiceVariant {
  store: Store;
  logLevel: LogLevel;
  /** The app with one action that does nothing (bench_noop) instead of the service's actions. */
  floor?: boolean;
  /** `funnel.enabled` off: the login case without the journey funnel, to measure what counting costs. */
  funnel?: false;
  /**
   * `challenge.mode`, on an instance with the abuse defences on (rate limits, the pumping
   * defence, the challenge's signals) at thresholds no bench load reaches, so nothing is refused
   * or challenged: what the check costs when it lets a request through (issue 37). Absent: the
   * defences off, as every other case runs.
   */
  challenge?: 'off' | 'adaptive';
  /** `tracing.sample_ratio` with tracing on, exporting to the fake upstreams' collector; absent: tracing off, as it ships. */
  tracing?: number;
  /** Passkeys on (the embedded database in memory), the bench's passkey kept. */
  passkeys?: true;
}

/**
 * How a reference app makes its one upstream call per answer: node:http on a kept-alive agent,
 * the service's own client (src/clients/http.ts, on its chosen transport), or the same client
 * on axios's own http adapter (the transport before issue 26).
 */
export type Transport = 'node:http' | 'upstream' | 'axios-http';

/** What a case's ratio is taken against: a reference app, or (for what a setting costs) the service with it off. */
export type RatioTo =
  'ref_node_http_call' | 'baseline' | 'login-funnel-off' | 'otp_generate-challenge-off' | 'login-tracing-off';

export interface BenchCase {
  name: string;
  /** What the table says it measures. */
  label: string;
  kind: LoadKind;
  /** Absent for the baseline and the reference apps, which run the bare Koa app. */
  service?: ServiceVariant;
  /** The reference apps: the bare Koa app plus one upstream call per answer, made this way. */
  transport?: Transport;
  /** The digit after `+393` of this case's phones. */
  phoneDigit: number;
  /** At least this many rounds, and seconds a run (its reference's too), in a full run: for a difference of a few percent. */
  rounds?: number;
  duration?: number;
  /** The reference measured before each of its rounds. */
  ratioTo?: RatioTo;
  /**
   * The most its ratio may be. For a `relativeTo` case, the most its ratio may exceed that
   * case's (info logs: 1.15, +15%).
   */
  floor?: number;
  relativeTo?: string;
  /** Actions that must be registered for the case to run. */
  requires?: string[];
  /**
   * Upstream calls per answer through the service's client (the login pair: five calls over two
   * answers). What the case costs beyond the echo and that many `ref_upstream_call`s is the
   * service's own work (`own_us`).
   */
  upstreamCalls?: number;
  /**
   * Run on this build only, never on an --against base: the pair measures a setting inside one
   * build, and a base without the setting would ignore it and run another case under its name.
   */
  thisBuildOnly?: true;
}

const memory: ServiceVariant = { store: 'memory', logLevel: 'warn' };
const memoryInfo: ServiceVariant = { store: 'memory', logLevel: 'info' };
const redis: ServiceVariant = { store: 'redis', logLevel: 'warn' };

export const BASELINE: BenchCase = {
  name: 'baseline',
  label: '(a) bare Koa + body parser, JSON echo',
  kind: 'echo',
  phoneDigit: 9,
};
export const REF_NODE_HTTP: BenchCase = {
  name: 'ref_node_http_call',
  label: '(r) bare Koa + one upstream GET through node:http, keep-alive',
  kind: 'echo',
  transport: 'node:http',
  phoneDigit: 9,
};

/**
 * The login pair on an instance with `funnel.enabled` off: the reference of `login+funnel`, so
 * that what counting costs is read from two runs a minute apart, not from two cases each
 * read against its own reference. Every case runs on a fresh instance, so the two halves use the
 * same phones.
 */
const LOGIN_FUNNEL_OFF: BenchCase = {
  name: 'login-funnel-off',
  label: '(r) FeLogin + FeVerifyOtp with funnel.enabled off',
  kind: 'login',
  service: { store: 'memory', logLevel: 'warn', funnel: false },
  phoneDigit: 3,
  requires: ['FeLogin', 'FeVerifyOtp'],
};

/**
 * otp_generate with the abuse defences on and `challenge.mode: off`: the reference of
 * `otp_generate+challenge`, built as the funnel pair is (the same phones on two fresh instances one
 * setting apart). Its phones are otp_generate's (`+3931`, an Italian mobile range): the pair runs
 * on the memory store only, each half on an instance of its own, so no store is shared.
 */
const CHALLENGE_OFF: BenchCase = {
  name: 'otp_generate-challenge-off',
  label: '(r) otp_generate with the abuse defences on, challenge.mode off',
  kind: 'otp_generate',
  service: { store: 'memory', logLevel: 'warn', challenge: 'off' },
  phoneDigit: 1,
  thisBuildOnly: true,
};

/**
 * The login pair as it ships (the funnel on, tracing off): the reference of the tracing pair
 * (issue 48), built as the funnel pair is. This build only: the base build may have no tracing.
 */
const LOGIN_TRACING_OFF: BenchCase = {
  name: 'login-tracing-off',
  label: '(r) FeLogin + FeVerifyOtp with tracing off, as it ships',
  kind: 'login',
  service: { store: 'memory', logLevel: 'warn' },
  phoneDigit: 3,
  requires: ['FeLogin', 'FeVerifyOtp'],
  thisBuildOnly: true,
};

/** The apps a case can be paired with, by the name its `ratioTo` gives. */
export const PAIRING: Readonly<Record<RatioTo, BenchCase>> = {
  baseline: BASELINE,
  ref_node_http_call: REF_NODE_HTTP,
  'login-funnel-off': LOGIN_FUNNEL_OFF,
  'otp_generate-challenge-off': CHALLENGE_OFF,
  'login-tracing-off': LOGIN_TRACING_OFF,
};

const viaNodeHttp = 'ref_node_http_call' as const;
const viaEcho = 'baseline' as const;

/** Every judged or reported case, in the order they run. */
export const CASES: readonly BenchCase[] = [
  {
    name: 'ref_upstream_call',
    label: "(r) bare Koa + one upstream GET through the service's client (src/clients/http.ts, its chosen transport)",
    kind: 'echo',
    transport: 'upstream',
    phoneDigit: 9,
    ratioTo: viaNodeHttp,
    floor: 1.1,
  },
  {
    name: 'ref_axios_http_call',
    label: "(r) the same client on axios's own http adapter (the transport before issue 26)",
    kind: 'echo',
    transport: 'axios-http',
    phoneDigit: 9,
    ratioTo: viaNodeHttp,
  },
  {
    name: 'noop_action',
    label: '(f) the service pipeline (createApp, createDeps) around an action that does nothing',
    kind: 'noop',
    service: { ...memory, floor: true },
    phoneDigit: 9,
    ratioTo: viaEcho,
    floor: 1.3,
    upstreamCalls: 0,
  },
  {
    name: 'otp_generate',
    label: '(b) otp_generate, SMS channel',
    kind: 'otp_generate',
    service: memory,
    phoneDigit: 1,
    ratioTo: viaNodeHttp,
    floor: 2.0,
    upstreamCalls: 1,
  },
  {
    name: 'verify_otp',
    label: '(c) verify_otp, right code, one-shot',
    kind: 'verify_otp',
    service: memory,
    phoneDigit: 2,
    ratioTo: viaEcho,
    floor: 2.0,
    upstreamCalls: 0,
  },
  {
    name: 'login',
    label: '(d) FeLogin + FeVerifyOtp, phone (each request counted)',
    kind: 'login',
    service: memory,
    phoneDigit: 3,
    ratioTo: viaNodeHttp,
    floor: 3.0,
    requires: ['FeLogin', 'FeVerifyOtp'],
    // FeLogin: the phone search, the SMS; FeVerifyOtp: the search, the token, the login ingest.
    upstreamCalls: 2.5,
  },
  // Beside the code login: the same token and ingest at the end, a signature verified instead of a code sent and checked.
  {
    name: 'passkey_login',
    label: '(d) PasskeyLoginOptions + PasskeyLogin, a synced passkey (each request counted)',
    kind: 'passkey_login',
    service: { ...memory, passkeys: true },
    phoneDigit: 0,
    ratioTo: viaNodeHttp,
    floor: 3.0,
    requires: ['PasskeyLoginOptions', 'PasskeyLogin'],
    // PasskeyLogin: the token, the login ingest; the options call nobody.
    upstreamCalls: 1,
  },
  // The same phones as its other half: two fresh instances, one setting apart.
  {
    name: 'login+funnel',
    label:
      '(d) the same with the funnel on, each round right after login-funnel-off: what counting costs (issue 28: at most 5%)',
    kind: 'login',
    service: memory,
    phoneDigit: 3,
    ratioTo: 'login-funnel-off',
    floor: 1.05,
    rounds: 5,
    duration: 8,
    requires: ['FeLogin', 'FeVerifyOtp'],
    upstreamCalls: 2.5,
  },
  // The same phones as its other half, as the funnel pair: two fresh instances, one setting apart.
  {
    name: 'otp_generate+challenge',
    label:
      '(b) otp_generate with challenge.mode adaptive, never challenged, each round right after the same with it off: what the check costs (issue 37: at most 5%)',
    kind: 'otp_generate',
    service: { ...memory, challenge: 'adaptive' },
    phoneDigit: 1,
    ratioTo: 'otp_generate-challenge-off',
    floor: 1.05,
    rounds: 5,
    duration: 8,
    upstreamCalls: 1,
    thisBuildOnly: true,
  },
  // The same phones as its reference, as the funnel pair: what a span per request, action and upstream call costs.
  {
    name: 'login+tracing',
    label:
      '(t) the login pair with tracing on, every trace kept (sample_ratio 1), right after it with tracing off: what tracing costs (issue 48)',
    kind: 'login',
    service: { ...memory, tracing: 1 },
    phoneDigit: 3,
    ratioTo: 'login-tracing-off',
    floor: 1.3,
    rounds: 5,
    duration: 8,
    requires: ['FeLogin', 'FeVerifyOtp'],
    upstreamCalls: 2.5,
    thisBuildOnly: true,
  },
  {
    name: 'login+tracing-0.1',
    label: '(t) the same, one trace in ten kept (sample_ratio 0.1)',
    kind: 'login',
    service: { ...memory, tracing: 0.1 },
    phoneDigit: 3,
    ratioTo: 'login-tracing-off',
    floor: 1.1,
    rounds: 5,
    duration: 8,
    requires: ['FeLogin', 'FeVerifyOtp'],
    upstreamCalls: 2.5,
    thisBuildOnly: true,
  },
  {
    name: 'get_user',
    label: '(e) get_user via the identity client',
    kind: 'get_user',
    service: memory,
    phoneDigit: 8,
    ratioTo: viaNodeHttp,
    floor: 1.5,
    upstreamCalls: 1,
  },
  {
    name: 'otp_generate+info',
    label: '(b) with info logs to /dev/null',
    kind: 'otp_generate',
    service: memoryInfo,
    phoneDigit: 4,
    ratioTo: viaNodeHttp,
    floor: 1.15,
    relativeTo: 'otp_generate',
    upstreamCalls: 1,
  },
  {
    name: 'verify_otp+info',
    label: '(c) with info logs to /dev/null',
    kind: 'verify_otp',
    service: memoryInfo,
    phoneDigit: 5,
    ratioTo: viaEcho,
    floor: 1.15,
    relativeTo: 'verify_otp',
    upstreamCalls: 0,
  },
  // Redis: the same work plus the store's round trips (a Lua script per code operation).
  {
    name: 'otp_generate@redis',
    label: '(b) on the Redis store',
    kind: 'otp_generate',
    service: redis,
    phoneDigit: 6,
    ratioTo: viaNodeHttp,
    floor: 1.5,
    upstreamCalls: 1,
  },
  {
    name: 'verify_otp@redis',
    label: '(c) on the Redis store',
    kind: 'verify_otp',
    service: redis,
    phoneDigit: 7,
    ratioTo: viaEcho,
    floor: 2.5,
    upstreamCalls: 0,
  },
];

/** The references every case's JSON names, whether or not it was paired with them. */
export const REFERENCE_NAMES = ['ref_node_http_call', 'ref_upstream_call', 'ref_axios_http_call'] as const;

export const phonePrefix = (benchCase: BenchCase) => `+393${benchCase.phoneDigit}`;

/** A pending code in the memory store takes at most this many bytes. */
export const MEMORY_TARGET_BYTES = 160;
/** A ratio whose rounds differ by more than this share of their median is NOISY. */
export const NOISY_SPREAD = 0.15;

/**
 * The tail-latency figure (issue 36): after its closed-loop rounds, this case runs paced at
 * these shares of its saturating rate (the lower of the two builds' with --against), each
 * build in turn, and reports p50/p99 per build.
 */
export const TAIL_CASE = 'login';
export const TAIL_LOADS: readonly number[] = [0.5, 0.9];
/** Seconds of each paced run in a full run (a smoke run: its --duration), and rounds (a smoke run: 1). */
export const TAIL_DURATION = 8;
export const TAIL_ROUNDS = 3;
/**
 * The rule --against holds the tail to: the new build's p99 at 90% load over the base's, median
 * of the rounds' ratios, at most TAIL_P99_FLOOR, unless the two are within TAIL_P99_SLACK_MS
 * (the schedule runs on Node's timers, 1 ms grain); NOISY when the rounds' ratios spread by
 * more than TAIL_NOISY_SPREAD (docs/performance.md, "Tail latency").
 */
export const TAIL_P99_FLOOR = 1.1;
export const TAIL_P99_SLACK_MS = 1;
export const TAIL_NOISY_SPREAD = 0.2;
