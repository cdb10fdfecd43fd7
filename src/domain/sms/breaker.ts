/*
 * A circuit breaker per SMS provider: `failures` consecutive failures open it; while open the
 * provider is skipped; after `openMs` one send may probe it (half-open) while the others still
 * skip it; the probe's success closes it, its failure opens it again.
 *
 * Written here rather than taken from a library (opossum): the behaviour asked for counts
 * consecutive failures, where opossum judges a failure percentage over a rolling window and
 * wraps every call in a timer of its own, a second timeout beside the client's. This is the
 * whole state machine, in memory, per process: each instance learns a provider is down by itself.
 */

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface Breaker {
  state(now: number): BreakerState;
  /** True when a send may go to the provider now; a half-open breaker lets one caller probe. */
  tryAcquire(now: number): boolean;
  success(): void;
  failure(now: number): void;
}

export function createBreaker(options: {
  failures: number;
  openMs: number;
  onChange?: (state: BreakerState) => void;
}): Breaker {
  let consecutive = 0;
  let openedAt: number | null = null;
  let probing = false;
  let reported: BreakerState = 'closed';
  const report = (state: BreakerState) => {
    if (state !== reported) {
      reported = state;
      options.onChange?.(state);
    }
  };
  const state = (now: number): BreakerState =>
    openedAt === null ? 'closed' : now - openedAt >= options.openMs ? 'half_open' : 'open';
  return {
    state,
    tryAcquire(now) {
      const current = state(now);
      if (current === 'closed') return true;
      if (current === 'open' || probing) return false;
      probing = true;
      report('half_open');
      return true;
    },
    success() {
      consecutive = 0;
      openedAt = null;
      probing = false;
      report('closed');
    },
    failure(now) {
      consecutive += 1;
      // A failed probe reopens at once; a closed breaker opens at the threshold.
      if (probing || consecutive >= options.failures) {
        openedAt = now;
        probing = false;
        report('open');
      }
    },
  };
}
