import { createHistogram, performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { Request } from 'autocannon';

/*
 * The tail runs' load: open loop on a fixed arrival schedule. autocannon's `overallRate` sends
 * each connection's share of a second back to back and then waits for the next second (its
 * issue 174), so the service sees one burst a second and the p99 measures the burst draining.
 * Here a journey (one request, or the login pair: FeLogin, then its FeVerifyOtp as soon as
 * FeLogin answers with the code) starts every 1 / rate s whether or not earlier ones have been
 * answered, and each request's latency runs from when it was due (its journey's slot, or the
 * previous answer of its journey), so the time it waited behind a slow one is counted rather
 * than omitted. No maintained Node library does that (autocannon paces per connection and
 * second; artillery is a framework of its own), so the schedule is here, the transport undici's
 * Pool (already the bench's dependency) and the histogram Node's own HdrHistogram
 * (`perf_hooks.createHistogram`).
 */

/** Sockets the pool may open: enough that a queue forms in the service, not in the generator. */
const PACED_SOCKETS = 256;
/** Seconds an answer may take before it counts as a timeout (autocannon's `timeout` in the closed-loop runs). */
const ANSWER_TIMEOUT_MS = 10_000;
const SUCCESS = '{"success":true';

/**
 * When each journey is due, in ms from the start: one every `perJourneys / rate` s, over
 * `duration` s. `rate` counts requests (what the closed loop's rate counts), so a journey of
 * two requests is due half as often.
 */
export function arrivalSchedule(rate: number, duration: number, requestsPerJourney = 1): number[] {
  const journeysPerSecond = rate / requestsPerJourney;
  const count = Math.floor(journeysPerSecond * duration);
  const gapMs = 1000 / journeysPerSecond;
  return Array.from({ length: count }, (_, i) => i * gapMs);
}

export interface PacedSpec {
  /** Base URL of the app under load. */
  url: string;
  /** Requests per second offered. */
  rate: number;
  /** Seconds of the schedule. */
  duration: number;
  /** One journey: its requests in order, built as autocannon's are (`setupRequest`, `onResponse`, a context per journey). */
  requests: Request[];
  headers: Record<string, string>;
}

export interface PacedResult {
  /** Answers, successful or not. */
  answered: number;
  /** From the start until the last answer. */
  durationSeconds: number;
  /** Milliseconds, from when each request was due. */
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  firstFailure?: string;
}

export async function runPaced(spec: PacedSpec): Promise<PacedResult> {
  const { requests, headers } = spec;
  const schedule = arrivalSchedule(spec.rate, spec.duration, requests.length);
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, {
    connections: PACED_SOCKETS,
    headersTimeout: ANSWER_TIMEOUT_MS,
    bodyTimeout: ANSWER_TIMEOUT_MS,
  });
  // Microseconds: the histogram holds integers, and a login answer takes about one ms.
  const latency = createHistogram();
  const counts = { non2xx: 0, errors: 0, timeouts: 0, mismatches: 0 };
  let answered = 0;
  let firstFailure: string | undefined;

  const journey = async (dueAt: number): Promise<void> => {
    const context: Record<string, string> = {};
    let due = dueAt;
    for (const template of requests) {
      const request = template.setupRequest ? template.setupRequest({ ...template }, context) : template;
      let body: string;
      let status: number;
      try {
        const answer = await pool.request({
          method: 'POST',
          path: `${url.pathname.replace(/\/$/, '')}${request.path ?? '/'}`,
          headers,
          body: request.body,
        });
        status = answer.statusCode;
        body = await answer.body.text();
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') counts.timeouts++;
        else counts.errors++;
        firstFailure ??= String(code ?? err);
        return;
      }
      const now = performance.now();
      answered++;
      latency.record(Math.max(1, Math.round((now - due) * 1000)));
      if (status < 200 || status > 299) counts.non2xx++;
      else if (!body.startsWith(SUCCESS)) counts.mismatches++;
      if (status < 200 || status > 299 || !body.startsWith(SUCCESS)) {
        firstFailure ??= body.slice(0, 300);
        return;
      }
      template.onResponse?.(status, body, context, {});
      // The next request of the journey is due now: its latency starts at this answer.
      due = now;
    }
  };

  const start = performance.now();
  const journeys: Promise<void>[] = [];
  await new Promise<void>((done) => {
    let next = 0;
    // A timer per tick, not per journey: each tick starts every journey whose time has come, so
    // a late timer (the event loop busy with answers) catches up instead of drifting.
    const tick = () => {
      const elapsed = performance.now() - start;
      while (next < schedule.length && schedule[next]! <= elapsed) journeys.push(journey(start + schedule[next++]!));
      if (next >= schedule.length) return done();
      setTimeout(tick, Math.max(0, schedule[next]! - (performance.now() - start)));
    };
    tick();
  });
  await Promise.all(journeys);
  const durationSeconds = Math.max(spec.duration, (performance.now() - start) / 1000);
  await pool.close();
  const ms = (percentile: number) => (latency.count === 0 ? 0 : Math.round(latency.percentile(percentile) / 10) / 100);
  return { answered, durationSeconds, p50: ms(50), p99: ms(99), ...counts, ...(firstFailure ? { firstFailure } : {}) };
}
