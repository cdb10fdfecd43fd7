import type { LoadKind } from './load';

/*
 * What `npm run bench` measures. Every service case runs against the real app (bench/service.ts)
 * with the store and log level of its variant; the ratio is to the baseline of the same run.
 * Each case has its own phone range (`+393<digit>` + 8 digits), so no case meets another's
 * cooldown or codes on a shared instance.
 */

export type Store = 'memory' | 'redis';
export type LogLevel = 'warn' | 'info';

export interface ServiceVariant {
  store: Store;
  logLevel: LogLevel;
  /** The app with one action that does nothing (bench_noop) instead of the service's actions. */
  floor?: boolean;
  /** `funnel.enabled` off: the login case without the journey funnel, to measure what counting costs. */
  funnel?: false;
}

export interface BenchCase {
  name: string;
  /** What the table says it measures. */
  label: string;
  kind: LoadKind;
  /** Absent for the baseline, which runs against the bare Koa app. */
  service?: ServiceVariant;
  /** The digit after `+393` of this case's phones. */
  phoneDigit: number;
  /**
   * The most this case may cost: its app CPU per answer as a multiple of the baseline's in the
   * same run (docs/performance.md). For a `relativeTo` case, the most its multiple may exceed
   * that case's (info logs: 1.15, +15%).
   */
  floor?: number;
  relativeTo?: string;
  /** Actions that must be registered for the case to run. */
  requires?: string[];
  /**
   * A reference, not judged: the baseline app plus one upstream call per answer (the profile
   * read of get_user, from the same fake upstream), made through the service's own axios client
   * or through node:http. What one upstream call costs before the service does anything.
   */
  transport?: Transport;
}

export type Transport = 'axios' | 'node:http';

const memory: ServiceVariant = { store: 'memory', logLevel: 'warn' };
const memoryInfo: ServiceVariant = { store: 'memory', logLevel: 'info' };
const redis: ServiceVariant = { store: 'redis', logLevel: 'warn' };

export const BASELINE: BenchCase = { name: 'baseline', label: '(a) bare Koa + body parser, JSON echo', kind: 'echo', phoneDigit: 9 };
/** The baseline measured again after the service cases. */
export const BASELINE_END: BenchCase = { ...BASELINE, name: 'baseline (end)', label: '(a) again, after the service cases' };

export const SERVICE_CASES: readonly BenchCase[] = [
  {
    name: 'noop_action',
    label: '(f) the service pipeline (createApp, createDeps) around an action that does nothing',
    kind: 'noop',
    service: { ...memory, floor: true },
    phoneDigit: 9,
    floor: 1.5,
  },
  { name: 'otp_generate', label: '(b) otp_generate, SMS channel', kind: 'otp_generate', service: memory, phoneDigit: 1, floor: 4 },
  { name: 'verify_otp', label: '(c) verify_otp, right code, one-shot', kind: 'verify_otp', service: memory, phoneDigit: 2, floor: 2.5 },
  { name: 'login', label: '(d) FeLogin + FeVerifyOtp, phone (each request counted)', kind: 'login', service: memory, phoneDigit: 3, floor: 8, requires: ['FeLogin', 'FeVerifyOtp'] },
  // Its own instance (another variant), so it may reuse the login case's phones.
  { name: 'login-funnel-off', label: '(d) the same, funnel.enabled off: login over this is what counting costs', kind: 'login', service: { ...memory, funnel: false }, phoneDigit: 3, floor: 8, requires: ['FeLogin', 'FeVerifyOtp'] },
  { name: 'get_user', label: '(e) get_user via the identity client', kind: 'get_user', service: memory, phoneDigit: 8, floor: 3.5 },
  { name: 'otp_generate+info', label: '(b) with info logs to /dev/null', kind: 'otp_generate', service: memoryInfo, phoneDigit: 4, floor: 1.15, relativeTo: 'otp_generate' },
  { name: 'verify_otp+info', label: '(c) with info logs to /dev/null', kind: 'verify_otp', service: memoryInfo, phoneDigit: 5, floor: 1.15, relativeTo: 'verify_otp' },
  // Redis: the same work plus the store's round trips (a Lua script per code operation, one per counter).
  { name: 'otp_generate@redis', label: '(b) on the Redis store', kind: 'otp_generate', service: redis, phoneDigit: 6, floor: 5 },
  { name: 'verify_otp@redis', label: '(c) on the Redis store', kind: 'verify_otp', service: redis, phoneDigit: 7, floor: 3 },
];

export const REFERENCE_CASES: readonly BenchCase[] = [
  { name: 'ref_axios_call', label: '(r) bare Koa + one upstream GET through the service\'s axios client (src/clients/http.ts)', kind: 'echo', transport: 'axios', phoneDigit: 9 },
  { name: 'ref_node_http_call', label: '(r) bare Koa + one upstream GET through node:http, keep-alive', kind: 'echo', transport: 'node:http', phoneDigit: 9 },
];

export const phonePrefix = (benchCase: BenchCase) => `+393${benchCase.phoneDigit}`;
/** Phone number `index` of a range: a valid Italian mobile in E.164 (`+393` + digit + 8 digits). */
export const variantKey = (variant: ServiceVariant) => `${variant.store}/${variant.logLevel}${variant.floor ? '/floor' : ''}${variant.funnel === false ? '/nofunnel' : ''}`;

/** A pending code in the memory store takes at most this many bytes. */
export const MEMORY_TARGET_BYTES = 200;
