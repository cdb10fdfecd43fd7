import { createHmac } from 'node:crypto';
import { budgetOf } from '../../core/address';
import type { RateLimiter } from './rate-limiter';

/*
 * Who has a verified history: a phone or an email whose code was verified within
 * `rate_limits.verified_history_days`. One fact, kept once and read by two defences: the SMS
 * pumping caps and blocked ranges spare such a phone (docs/security.md, "Caps that spare verified
 * phones"), and the bot challenge's wider networks and destination signals challenge new
 * identifiers, not these people (docs/security.md, "Budgets that nest"). Built once in deps.ts and
 * recorded there for every address a verified code proved.
 * Kept in the rate limiter's store, so it holds across instances on Redis, as a keyed digest
 * of the inbox (never the address) with the lifetime as its expiry: counted from the first
 * verification in the period, then again from the first after it lapses.
 */

export interface VerifiedHistory {
  /** Whether a code to this phone or email was verified within the period. */
  has(identifier: string): Promise<boolean>;
  /** A code to this phone or email was verified now. */
  record(identifier: string): Promise<void>;
}

const DAY = 86_400_000;

export interface VerifiedHistoryOptions {
  /** The service's secret: the digest's key is derived from it. */
  secret: string;
  /** `rate_limits.verified_history_days`; 0: no one has a history. */
  days: number;
  now: () => number;
}

export function createVerifiedHistory(limiter: RateLimiter, options: VerifiedHistoryOptions): VerifiedHistory {
  const { now } = options;
  const periodMs = options.days * DAY;
  // The key and the subject's name are those the bot challenge first kept this history under: histories already in a store still count.
  const key = createHmac('sha256', options.secret).update('challenge').digest();
  const subject = (identifier: string) =>
    `challenge_verified:${createHmac('sha256', key)
      .update(`verified\n${budgetOf(identifier)}`)
      .digest('base64url')
      .slice(0, 22)}`;
  return {
    async has(identifier) {
      if (periodMs === 0) return false;
      return !(await limiter.peek(subject(identifier), 0, now())).allowed;
    },
    async record(identifier) {
      if (periodMs === 0) return;
      await limiter.hit(subject(identifier), Number.MAX_SAFE_INTEGER, periodMs, now());
    },
  };
}
