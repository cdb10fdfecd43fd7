import { createHmac } from 'node:crypto';
import { budgetOf } from '../../core/address';
import type { RateLimiter } from './rate-limiter';

/*
 * Who has a verified history, as the bot challenge asks it (docs/security.md, "Budgets that
 * nest"): a phone or an email whose code was verified within `challenge.verified_history_days`.
 * Kept in the rate limiter's store, so it holds across instances on Redis, as a keyed digest
 * of the inbox (never the address) with the lifetime as its expiry: counted from the first
 * verification in the period, then again from the first after it lapses. A wider network's
 * signals and the destination's rate signals challenge new identifiers, not these people.
 */

export interface VerifiedHistory {
  /** Whether a code to this phone or email was verified within the period. */
  has(identifier: string): Promise<boolean>;
  /** A code to this phone or email was verified now. */
  record(identifier: string): Promise<void>;
}

const DAY = 86_400_000;

export function createVerifiedHistory(limiter: RateLimiter, key: Buffer, days: number, now: () => number): VerifiedHistory {
  const periodMs = days * DAY;
  const subject = (identifier: string) => `challenge_verified:${createHmac('sha256', key).update(`verified\n${budgetOf(identifier)}`).digest('base64url').slice(0, 22)}`;
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
