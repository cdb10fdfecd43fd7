import { LRUCache } from 'lru-cache';

/*
 * Fixed-window counters: cheap, one atomic step per hit on either store (an INCR with an
 * expiry on Redis), and precise enough for abuse limits measured in hours and minutes.
 */

export interface RateDecision {
  allowed: boolean;
  /** Hits left in this window after this one. */
  remaining: number;
  /** Until the window resets; 0 when allowed. */
  retryAfterMs: number;
}

export interface RateLimiter {
  /** Counts one hit for `key` and says whether it is within `limit` per `windowMs`. */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision>;
  close(): Promise<void>;
}

interface Window {
  count: number;
  resetAt: number;
}

export function createMemoryRateLimiter(maxKeys = 500_000): RateLimiter {
  const windows = new LRUCache<string, Window>({ max: maxKeys });
  return {
    async hit(key, limit, windowMs, now) {
      let window = windows.get(key);
      if (!window || window.resetAt <= now) {
        window = { count: 0, resetAt: now + windowMs };
        windows.set(key, window);
      }
      window.count += 1;
      const allowed = window.count <= limit;
      return { allowed, remaining: Math.max(0, limit - window.count), retryAfterMs: allowed ? 0 : window.resetAt - now };
    },
    async close() {
      windows.clear();
    },
  };
}
