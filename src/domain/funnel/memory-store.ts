import { addInto, bucketsFor, HOUR_MS, HOUR_RETENTION_MS, MINUTE_MS, MINUTE_RETENTION_MS, type FunnelCounts, type FunnelStore } from './store';

/** One instance's funnel counters (otp.store memory): the same buckets as Redis, dropped as they age out. */
export function createMemoryFunnelStore(): FunnelStore {
  const minutes = new Map<number, FunnelCounts>();
  const hours = new Map<number, FunnelCounts>();
  let pruned = 0;
  const prune = (nowMs: number) => {
    if (nowMs - pruned < MINUTE_MS) return;
    pruned = nowMs;
    for (const at of minutes.keys()) if (at < nowMs - MINUTE_RETENTION_MS - MINUTE_MS) minutes.delete(at);
    for (const at of hours.keys()) if (at < nowMs - HOUR_RETENTION_MS - HOUR_MS) hours.delete(at);
  };
  const bucket = (map: Map<number, FunnelCounts>, at: number) => {
    let counts = map.get(at);
    if (!counts) map.set(at, (counts = {}));
    return counts;
  };
  return {
    async add(counts, atMs) {
      addInto(bucket(minutes, Math.floor(atMs / MINUTE_MS) * MINUTE_MS), counts);
      addInto(bucket(hours, Math.floor(atMs / HOUR_MS) * HOUR_MS), counts);
      prune(atMs);
    },
    async read(fromMs, toMs, nowMs) {
      const { starts, ...range } = bucketsFor(fromMs, toMs, nowMs);
      const map = range.resolution === 'minute' ? minutes : hours;
      const counts: FunnelCounts = {};
      for (const at of starts) {
        const found = map.get(at);
        if (found) addInto(counts, found);
      }
      return { counts, range };
    },
  };
}
