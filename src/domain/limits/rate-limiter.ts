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

/** One limit of a chain on one subject: its name keeps its counter apart from the chain's others. */
export interface RateRule {
  name: string;
  limit: number;
  windowMs: number;
}

/** A chain's answer: the index of the rule that refused (-1 when none did) and until its window resets (0 when none). */
interface ChainDecision {
  refused: number;
  retryAfterMs: number;
}

export interface RateLimiter {
  /** Counts one hit for `key` and says whether it is within `limit` per `windowMs`. */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision>;
  /**
   * Counts one hit against each rule on `key` in order, stopping at the first that refuses: the
   * rules after it are not counted, as with one `hit` per rule that stops at a refusal, but in
   * one atomic step (one entry in memory, one script on Redis). `key` names one chain: it is
   * always given the same rules.
   */
  hitEach(key: string, rules: readonly RateRule[], now: number): Promise<ChainDecision>;
  /** Says whether `key` is over `limit` in its current window without counting a hit (a lockout asked about by a request it does not count). */
  peek(key: string, limit: number, now: number): Promise<RateDecision>;
  close(): Promise<void>;
}

/** Opens window `i` of `entry` ([count, resetAt] per window) again when it has passed (or has no slot yet), then counts one hit in it; answers the count. */
function countIn(entry: number[], i: number, windowMs: number, now: number): number {
  if (!(entry[2 * i + 1]! > now)) {
    entry[2 * i] = 0;
    entry[2 * i + 1] = now + windowMs;
  }
  return (entry[2 * i] = entry[2 * i]! + 1);
}

export function createMemoryRateLimiter(maxKeys = 500_000): RateLimiter & { clear(): void } {
  // One cache for single counters and chains: a chain's key is braced, as its Redis hash tag, where
  // a counter's starts with its limit's name. maxSize with a unit size rather than `max`, which
  // preallocates every slot: ~190 ms of CPU per limiter at 500,000, paid by each test's service.
  const entries = new LRUCache<string, number[]>({ maxSize: maxKeys, sizeCalculation: () => 1 });
  // Made at its full length: an array grown from empty would reserve 16 slots.
  const entryOf = (key: string, windows: number) => {
    let entry = entries.get(key);
    if (!entry) entries.set(key, (entry = new Array<number>(2 * windows).fill(0)));
    return entry;
  };
  return {
    async hit(key, limit, windowMs, now) {
      const entry = entryOf(key, 1);
      const count = countIn(entry, 0, windowMs, now);
      const allowed = count <= limit;
      return { allowed, remaining: Math.max(0, limit - count), retryAfterMs: allowed ? 0 : entry[1]! - now };
    },
    async peek(key, limit, now) {
      const entry = entries.get(key);
      const count = entry && entry[1]! > now ? entry[0]! : 0;
      const allowed = count <= limit;
      return { allowed, remaining: Math.max(0, limit - count), retryAfterMs: allowed ? 0 : entry![1]! - now };
    },
    async hitEach(key, rules, now) {
      const entry = entryOf(`{${key}}`, rules.length);
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i]!;
        if (countIn(entry, i, rule.windowMs, now) > rule.limit)
          return { refused: i, retryAfterMs: entry[2 * i + 1]! - now };
      }
      return { refused: -1, retryAfterMs: 0 };
    },
    clear: () => entries.clear(),
    // Stryker disable next-line BlockStatement: frees the memory of a limiter nothing uses any more; no call follows it to observe
    async close() {
      entries.clear();
    },
  };
}
