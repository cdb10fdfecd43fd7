import { LRUCache } from 'lru-cache';
import { journeyStart } from './journey-id';
import {
  addInto,
  bucketStarts,
  fieldsOf,
  HOUR_MS,
  HOUR_RETENTION_MS,
  journeyUntil,
  MINUTE_MS,
  MINUTE_RETENTION_MS,
  type CurrentCount,
  type FunnelCounts,
  type FunnelStore,
  type FunnelStoreOptions,
} from './store';

/**
 * Journeys whose sets one instance keeps at most (the least recently active go first; one such
 * journey's later requests would count it again). At ~360 B a journey whatever its length (the
 * cache's entry, the id, the set; the field names are shared), 36 MB.
 */
const MEMORY_JOURNEYS = 100_000;
/** Distinct field names kept for sharing; past it they start over (fields are few: trails of the diagrams). */
const INTERNED_FIELDS = 10_000;

/** A journey's set: until when it is kept, and the fields it was counted for. */
interface JourneySet {
  until: number;
  fields: string[];
  current?: CurrentCount;
}

/** One instance's funnel counts (otp.store memory): the same buckets and journey sets as Redis, dropped as they age out. */
export function createMemoryFunnelStore(options: FunnelStoreOptions = { idleMs: 15 * 60_000 }): FunnelStore {
  const minutes = new Map<number, FunnelCounts>();
  const hours = new Map<number, FunnelCounts>();
  // Per journey: until when it is kept, and what it was counted for, updated in place: a request
  // allocates nothing here for a field already known. maxSize with a unit size, so the cache
  // grows with use instead of being preallocated.
  const journeys = new LRUCache<string, JourneySet>({ maxSize: MEMORY_JOURNEYS, sizeCalculation: () => 1 });
  // Every journey's set names fields of one small vocabulary: each name is kept once and shared,
  // so a set is an array of references, not copies of its names.
  const interned = new Map<string, string>();
  const intern = (field: string) => {
    const known = interned.get(field);
    if (known !== undefined) return known;
    if (interned.size >= INTERNED_FIELDS) interned.clear();
    interned.set(field, field);
    return field;
  };
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
      const added: string[][] = [];
      for (const entry of entries) {
        let set: JourneySet | undefined;
        if (entry.journey !== undefined) {
          set = journeys.get(entry.journey);
          if (set === undefined || set.until <= nowMs) journeys.set(entry.journey, (set = { until: 0, fields: [] }));
        }
        const fields = fieldsOf(entry, (field) => {
          if (!set || set.fields.includes(field)) return false;
          set.fields.push(intern(field));
          return true;
        });
        if (entry.journey !== undefined && set) {
          set.until = journeyUntil(journeyStart(entry.journey), nowMs, options.idleMs);
          if (set.until <= nowMs) journeys.delete(entry.journey);
        }
        added.push(fields);
        const moves: Array<[string, number]> = fields.map((field) => [field, 1]);
        const current = entry.current;
        if (current && set && (!set.current || current.rank >= set.current.rank)) {
          if (set.current?.field !== current.field) {
            if (set.current) moves.push([set.current.field, -1]);
            moves.push([current.field, 1]);
          }
          set.current = { field: intern(current.field), rank: current.rank };
        }
        if (moves.length === 0) continue;
        const minute = bucket(minutes, Math.floor(entry.at / MINUTE_MS) * MINUTE_MS);
        const hour = bucket(hours, Math.floor(entry.at / HOUR_MS) * HOUR_MS);
        for (const [field, n] of moves) {
          minute[field] = (minute[field] ?? 0) + n;
          hour[field] = (hour[field] ?? 0) + n;
        }
      }
      prune(nowMs);
      return added;
    },
    async read(range, nowMs) {
      return { counts: sum(range.resolution === 'minute' ? minutes : hours, bucketStarts(range)), range, at: nowMs };
    },
  };
}
