import autocannon, { type Request, type Result } from 'autocannon';
import { phoneOf } from './phones';
import { announce, serve } from './child';
import { runPaced } from './pacer';
import { benchAssertionBody } from './passkey';

/*
 * The load generator, in its own process (never the service's): autocannon's programmatic API,
 * because some cases need per-request bodies (a distinct phone per request) and one case
 * chains two requests through a per-connection context (FeLogin's code into FeVerifyOtp).
 * Every answer is checked: a non-2xx, a socket error, a timeout or an envelope that is not
 * `success: true` counts as a failure.
 */

export type LoadKind = 'echo' | 'noop' | 'otp_generate' | 'verify_otp' | 'login' | 'passkey_login' | 'get_user';

export interface LoadSpec {
  kind: LoadKind;
  /** Base URL of the app under load. */
  url: string;
  /** Seconds of load. */
  duration: number;
  connections: number;
  /** E.164 prefix of the phones this case uses; the index of each request is appended (8 digits). */
  phonePrefix?: string;
  /** The first index: a measured run goes on where its warm-up stopped (codes are one-shot, sends have a cooldown). */
  firstIndex?: number;
  /** The code every pre-issued key holds (verify_otp). */
  code?: string;
  /** How many keys were pre-issued: verify_otp never asks for more. */
  keys?: number;
  /** `x-internal-key` (get_user). */
  internalKey?: string;
  uid?: string;
  /**
   * Requests per second offered on an even schedule, open loop (bench/pacer.ts; `connections`
   * unused): the paced runs of the tail-latency figure. Absent: closed loop on autocannon, each
   * connection sends its next request as soon as its last is answered (the saturating rate).
   */
  rate?: number;
}

export interface LoadResult {
  kind: LoadKind;
  /** Answers counted, successful or not (for the login pair: each of its two requests). */
  requests: number;
  failures: number;
  /** Answers per second over the measured time. */
  rps: number;
  p50: number;
  p99: number;
  durationSeconds: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  /** The first answer that was not a success, for the report. */
  firstFailure?: string;
  /** True when verify_otp ran out of pre-issued keys (the rest would fail). */
  exhausted?: boolean;
  /** The index the next run of this case starts at. */
  nextIndex: number;
}

const SUCCESS = '{"success":true';
const JSON_HEADERS = { 'content-type': 'application/json' };
const CODE_IN_ANSWER = /"otp":"(\d+)"/;
const CHALLENGE_IN_ANSWER = /"challenge":"([\w-]+)"/;
const PASSKEY_PROOF_IN_ANSWER = /"passkey_proof":"([\w.-]+)"/;

/** The requests of one case: a fixed body, or bodies built per request from a shared counter. */
export function requestsFor(spec: LoadSpec): {
  requests: Request[];
  headers: Record<string, string>;
  state: { next: number; exhausted: boolean };
} {
  const state = { next: spec.firstIndex ?? 0, exhausted: false };
  const prefix = spec.phonePrefix ?? '+3939';
  const post = (path: string, setupRequest?: Request['setupRequest'], body?: string): Request => ({
    method: 'POST',
    path,
    ...(body ? { body } : {}),
    ...(setupRequest ? { setupRequest } : {}),
  });
  switch (spec.kind) {
    case 'echo':
      return {
        headers: JSON_HEADERS,
        state,
        requests: [post('/', undefined, JSON.stringify({ uid: phoneOf(prefix, 0) }))],
      };
    case 'noop':
      return {
        headers: JSON_HEADERS,
        state,
        requests: [post('/?action=bench_noop', undefined, JSON.stringify({ uid: phoneOf(prefix, 0) }))],
      };
    case 'otp_generate':
      return {
        headers: JSON_HEADERS,
        state,
        requests: [
          post('/?action=otp_generate', (req) => ({ ...req, body: `{"uid":"${phoneOf(prefix, state.next++)}"}` })),
        ],
      };
    case 'verify_otp':
      return {
        headers: JSON_HEADERS,
        state,
        requests: [
          post('/?action=verify_otp', (req) => {
            if (spec.keys !== undefined && state.next >= spec.keys) state.exhausted = true;
            return { ...req, body: `{"email":"${phoneOf(prefix, state.next++)}","otp_code":"${spec.code}"}` };
          }),
        ],
      };
    case 'login':
      return {
        headers: JSON_HEADERS,
        state,
        requests: [
          {
            method: 'POST',
            path: '/?action=FeLogin',
            setupRequest: (req, context) => {
              context.phone = phoneOf(prefix, state.next++);
              return { ...req, body: `{"identifier":"${context.phone}"}` };
            },
            onResponse: (_status, body, context) => {
              context.code = CODE_IN_ANSWER.exec(body)?.[1] ?? 'missing';
            },
          },
          post('/?action=FeVerifyOtp', (req, context) => ({
            ...req,
            body: `{"flow":"phone","phone":"${context.phone}","otp_code":"${context.code}"}`,
          })),
        ],
      };
    case 'passkey_login':
      // The options, then the assertion of the bench's passkey answering their challenge (bench/passkey.ts).
      return {
        headers: JSON_HEADERS,
        state,
        requests: [
          {
            ...post('/?action=PasskeyLoginOptions', undefined, '{}'),
            onResponse: (_status, body, context) => {
              context.challenge = CHALLENGE_IN_ANSWER.exec(body)?.[1] ?? 'missing';
              context.passkeyProof = PASSKEY_PROOF_IN_ANSWER.exec(body)?.[1] ?? 'missing';
            },
          },
          post('/?action=PasskeyLogin', (req, context) => ({
            ...req,
            body: benchAssertionBody(String(context.challenge), String(context.passkeyProof)),
          })),
        ],
      };
    case 'get_user':
      return {
        headers: { ...JSON_HEADERS, 'x-internal-key': spec.internalKey ?? '' },
        state,
        requests: [post('/?action=get_user', undefined, JSON.stringify({ uid: spec.uid }))],
      };
  }
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return spec.rate ? runPacedLoad({ ...spec, rate: spec.rate }) : runClosedLoop(spec);
}

async function runPacedLoad(spec: LoadSpec & { rate: number }): Promise<LoadResult> {
  const { requests, headers, state } = requestsFor(spec);
  const { answered, durationSeconds, ...figures } = await runPaced({
    url: spec.url,
    rate: spec.rate,
    duration: spec.duration,
    requests,
    headers,
  });
  return {
    kind: spec.kind,
    requests: answered,
    failures: figures.non2xx + figures.errors + figures.timeouts + figures.mismatches,
    rps: answered / durationSeconds,
    durationSeconds,
    ...figures,
    ...(state.exhausted ? { exhausted: true } : {}),
    nextIndex: state.next,
  };
}

function runClosedLoop(spec: LoadSpec): Promise<LoadResult> {
  const { requests, headers, state } = requestsFor(spec);
  let firstFailure: string | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.duration,
        headers,
        requests,
        timeout: 10,
        verifyBody: (body: string) => {
          if (body.startsWith(SUCCESS)) return true;
          firstFailure ??= body.slice(0, 300);
          return false;
        },
      },
      (err: Error | null, result: Result) => {
        if (err) return reject(err);
        const r = result as Result & { mismatches: number };
        const requestsDone = r.requests.total;
        const failures = r.non2xx + r.errors + r.timeouts + r.mismatches;
        resolve({
          kind: spec.kind,
          requests: requestsDone,
          failures,
          rps: requestsDone / r.duration,
          p50: r.latency.p50,
          p99: r.latency.p99,
          durationSeconds: r.duration,
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          mismatches: r.mismatches,
          ...(firstFailure ? { firstFailure } : {}),
          ...(state.exhausted ? { exhausted: true } : {}),
          nextIndex: state.next,
        });
      },
    );
    // No progress bar: the runner prints the table.
    void instance;
  });
}

if (require.main === module) {
  serve(async (command) => {
    if (command.type === 'run') return runLoad(command.spec as LoadSpec);
    throw new Error(`unknown command ${String(command.type)}`);
  });
  announce({ pid: process.pid });
}
