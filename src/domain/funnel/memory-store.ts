import { addInto, bucketStarts, CONVERSION_WINDOW_MS, fieldsOf, HOUR_MS, HOUR_RETENTION_MS, MINUTE_MS, MINUTE_RETENTION_MS, openMinutes, type FunnelCounts, type FunnelStore } from './store';
import { journeyStart } from './journey-id';

/** One instance's funnel counts (otp.store memory): the same buckets and journey sets as Redis, dropped as they age out. */
export function createMemoryFunnelStore(): FunnelStore {
  const minutes = new Map<number, FunnelCounts>();
  const hours = new Map<number, FunnelCounts>();
  /** Per journey: what it was counted for, until its window closes. */
  const journeys = new Map<string, { counted: Set<string>; until: number }>();
  let pruned = 0;
  const prune = (nowMs: number) => {
    if (nowMs - pruned < MINUTE_MS) return;
    pruned = nowMs;
    for (const at of minutes.keys()) if (at < nowMs - MINUTE_RETENTION_MS - MINUTE_MS) minutes.delete(at);
    for (const at of hours.keys()) if (at < nowMs - HOUR_RETENTION_MS - HOUR_MS) hours.delete(at);
    for (const [id, state] of journeys) if (state.until <= nowMs) journeys.delete(id);
  };
  const bucket = (map: Map<number, FunnelCounts>, at: number) => {
    let counts = map.get(at);
    if (!counts) map.set(at, (counts = {}));
    return counts;
  };
  const sum = (map: Map<number, FunnelCounts>, starts: number[]) => {
    const counts: FunnelCounts = {};
    for (const at of starts) {
      const found = map.get(at);
      if (found) addInto(counts, found);
    }
    return counts;
  };
  return {
    async add(entries, nowMs) {
      for (const entry of entries) {
        let counted: Set<string> | undefined;
        if (entry.journey !== undefined) {
          const state = journeys.get(entry.journey) ?? { counted: new Set<string>(), until: Math.floor(journeyStart(entry.journey) / MINUTE_MS) * MINUTE_MS + CONVERSION_WINDOW_MS };
          journeys.set(entry.journey, state);
          counted = state.counted;
        }
        const fields = fieldsOf(entry, (field) => {
          if (!counted || counted.has(field)) return false;
          counted.add(field);
          return true;
        });
        if (fields.length === 0) continue;
        const minute = bucket(minutes, Math.floor(entry.at / MINUTE_MS) * MINUTE_MS);
        const hour = bucket(hours, Math.floor(entry.at / HOUR_MS) * HOUR_MS);
        for (const field of fields) {
          minute[field] = (minute[field] ?? 0) + 1;
          hour[field] = (hour[field] ?? 0) + 1;
        }
      }
      prune(nowMs);
    },
    async read(range, nowMs) {
      return { counts: sum(range.resolution === 'minute' ? minutes : hours, bucketStarts(range)), open: sum(minutes, openMinutes(range, nowMs)), range };
    },
  };
}
