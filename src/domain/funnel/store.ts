/*
 * The funnel's counters across instances (docs/funnel.md): named counts added in batches and
 * read back summed over a time range. The store knows nothing of journeys or steps: a field is
 * an opaque bounded name the counter chose (`e|awaitingPhoneCode|loggedIn`), so a new step or
 * journey needs nothing here. Each batch lands in two time buckets: its minute (kept a day) and
 * its hour (kept 30 days); a range is read from minutes when it is short enough to lie within
 * them, from hours otherwise.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** Minute buckets are kept a day, hour buckets 30 days. */
export const MINUTE_RETENTION_MS = DAY_MS;
export const HOUR_RETENTION_MS = 30 * DAY_MS;
/** Ranges up to this long are read from minute buckets (finer edges); longer ones from hours. */
export const MINUTE_READ_LIMIT_MS = 6 * HOUR_MS;

export type FunnelCounts = Record<string, number>;

export interface FunnelRange {
  /** Inclusive start and exclusive end, ms since the epoch, aligned to the buckets read. */
  from: number;
  to: number;
  resolution: 'minute' | 'hour';
}

export interface FunnelStore {
  /** Adds the counts to the buckets of `atMs`. */
  add(counts: FunnelCounts, atMs: number): Promise<void>;
  /** The counts summed over the buckets that cover [fromMs, toMs). */
  read(fromMs: number, toMs: number, nowMs: number): Promise<{ counts: FunnelCounts; range: FunnelRange }>;
}

/** The buckets a range is read from: aligned outwards to whole buckets, minute ones only where they are still kept. */
export function bucketsFor(fromMs: number, toMs: number, nowMs: number): FunnelRange & { starts: number[] } {
  const minutes = toMs - fromMs <= MINUTE_READ_LIMIT_MS && fromMs >= nowMs - MINUTE_RETENTION_MS;
  const size = minutes ? MINUTE_MS : HOUR_MS;
  const from = Math.floor(fromMs / size) * size;
  const to = Math.ceil(toMs / size) * size;
  const starts: number[] = [];
  for (let at = from; at < to; at += size) starts.push(at);
  return { from, to, resolution: minutes ? 'minute' : 'hour', starts };
}

export const addInto = (into: FunnelCounts, counts: FunnelCounts): FunnelCounts => {
  for (const [field, n] of Object.entries(counts)) into[field] = (into[field] ?? 0) + n;
  return into;
};
