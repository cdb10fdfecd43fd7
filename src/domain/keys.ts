import { createHash, timingSafeEqual } from 'node:crypto';
import { clientNetwork } from '../core/client-network';
import type { Config } from '../core/config/schema';
import type { KeyName, PresentedKeys } from '../core/context';
import type { Logger } from '../core/logger';
import { rateLimited } from './limits/abuse-limits';
import type { RateDecision, RateLimiter } from './limits/rate-limiter';

/*
 * The keys that open internal surfaces (docs/security.md "Guessing and lookups"), compared here
 * and nowhere else: `security.internal_key` (header x-internal-key: tokens for any uid, the
 * diagnostics), `funnel.read_key` (x-funnel-key: the funnel's counts) and `metrics.token`
 * (`Authorization: Bearer` on /metrics). A wrong key is a guess: counted per client network (an
 * IPv6 client's /64, src/core/client-network.ts) in the rate limiter's store (so a fleet counts
 * it once), logged without the value, and past `rate_limits.wrong_keys_per_ip` the client is
 * locked out of every key, the right one too, until its window ends. Limits switched off leave
 * this on: it guards the keys, not a budget a gateway in front could keep instead.
 */

/** Where each key is presented: what a warning names, never the value. */
export const KEY_HEADERS: Readonly<Record<KeyName, string>> = {
  internal: 'x-internal-key',
  funnel: 'x-funnel-key',
  metrics: 'authorization',
};

const KEY_NAMES = Object.keys(KEY_HEADERS) as KeyName[];

/** A request that presented no key. */
export const NO_KEYS: PresentedKeys = Object.freeze({
  internal: false,
  funnel: false,
  // Stryker disable next-line BooleanLiteral: nothing reads it; /metrics asks metricsTokenHeld, not the request's keys
  metrics: false,
});

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Equal-length digests compared in constant time: neither the time nor the length of the key shows. An empty key opens nothing. */
export function keyMatches(expected: string, given: string): boolean {
  return expected !== '' && timingSafeEqual(digest(expected), digest(given));
}

/** keyMatches for one configured key, its digest taken once: a request hashes only what it presented. */
function matcherOf(expected: string): (given: string) => boolean {
  // check() passes over a key not configured before it matches: this keeps the matcher safe on its own.
  // Stryker disable next-line BooleanLiteral,ConditionalExpression,StringLiteral: unreachable from check(), see above
  if (expected === '') return () => false;
  const want = digest(expected);
  return (given) => timingSafeEqual(want, digest(given));
}

/**
 * Where a wrong key is logged: a request's state, whose child logger is made on first use
 * (src/http/app.ts), so a request whose keys hold makes none.
 */
export interface LogScope {
  readonly log: Logger;
}

export interface KeyChecks {
  /**
   * Compares each key the request presented (absent or empty ones are not presented: a public
   * caller sends none) and answers which held; throws `rate_limited` (429, `data.limit:
   * "wrong_keys_per_ip"`) when this client is locked out, whether or not the key was right.
   */
  check(ip: string, given: Partial<Record<KeyName, string>>, scope: LogScope): Promise<PresentedKeys>;
}

export function createKeyChecks(
  config: Config,
  limiter: RateLimiter,
  now: () => number,
  onRefused: () => void = () => {},
): KeyChecks {
  const expected: Record<KeyName, string> = {
    internal: config.security.internal_key,
    funnel: config.funnel.read_key,
    metrics: config.metrics.token,
  };
  const matches: Record<KeyName, (given: string) => boolean> = {
    internal: matcherOf(expected.internal),
    funnel: matcherOf(expected.funnel),
    metrics: matcherOf(expected.metrics),
  };
  const { wrong_keys_per_ip: limit, wrong_key_lockout_seconds: windowSeconds } = config.rate_limits;
  const windowMs = windowSeconds * 1000;
  return {
    async check(ip, given, scope) {
      const counter = `wrong_keys_per_ip:${clientNetwork(ip)}`;
      const held: Record<KeyName, boolean> = { internal: false, funnel: false, metrics: false };
      let counted: RateDecision | undefined;
      for (const name of KEY_NAMES) {
        const value = given[name];
        // A key not configured opens nothing: there is nothing to guess, and nothing is counted.
        if (!value || !expected[name]) continue;
        if (matches[name](value)) {
          held[name] = true;
          continue;
        }
        scope.log.warn({ event: 'wrong_key', header: KEY_HEADERS[name], ip }, 'wrong key refused');
        counted = await limiter.hit(counter, limit, windowMs, now());
      }
      // A right key is refused too while the client is locked out: a lockout that let the right guess through would not stop guessing.
      const decision =
        counted ??
        (held.internal || held.funnel || held.metrics ? await limiter.peek(counter, limit, now()) : undefined);
      if (decision && !decision.allowed) {
        onRefused();
        throw rateLimited(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)), 'wrong_keys_per_ip');
      }
      return held;
    },
  };
}
