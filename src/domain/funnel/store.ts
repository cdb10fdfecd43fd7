/*
 * The funnel's counts across instances (docs/funnel.md). The unit is a person's journey: each
 * entry names its journey, and a count marked `once` is added only the first time that journey
 * brings it (the journey's set of what it was counted for lives as long as the conversion
 * window), so a resend, a retry or a replayed proof never counts a person twice. Every count of
 * a journey lands in the buckets of the minute and the hour where it STARTED (its id says when):
 * a journey is never split across two ranges. Minute buckets are kept a day, hour buckets 30
 * days. The store knows nothing of screens: a field is an opaque bounded name the counter chose.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** Minute buckets are kept a day, hour buckets 30 days. */
export const MINUTE_RETENTION_MS = DAY_MS;
export const HOUR_RETENTION_MS = 30 * DAY_MS;
/** Ranges up to this long are read from minute buckets (finer edges); longer ones from hours. */
export const MINUTE_READ_LIMIT_MS = 6 * HOUR_MS;
/**
 * The conversion window: a journey is counted for what it does within this long of its start;
 * after it, its figures never change again. Whether one that went nowhere is still in progress
 * or has stopped is its idleness (src/domain/funnel/counting.ts, `funnel.idle_seconds`), not this window.
 */
export const CONVERSION_WINDOW_MS = HOUR_MS;

/**
 * How long a journey's set is kept after its last request: as long as the longest of a proof's
 * and a code's lifetimes, after which none of what it carries is accepted any more (so it can
 * make no request that counts), and never past its window.
 */
export const journeyIdleMs = (config: {
  security: { proof_ttl_seconds: number };
  otp: { ttl_seconds: number };
}): number => Math.max(config.security.proof_ttl_seconds, config.otp.ttl_seconds) * 1000;

export interface FunnelStoreOptions {
  /** journeyIdleMs. */
  idleMs: number;
}

/** When a journey's set may be forgotten: `idleMs` after its last request, and at the latest when its window closes. */
export const journeyUntil = (startMs: number, nowMs: number, idleMs: number): number =>
  Math.min(Math.floor(startMs / MINUTE_MS) * MINUTE_MS + CONVERSION_WINDOW_MS, nowMs + idleMs);

export type FunnelCounts = Record<string, number>;

/**
 * A count a journey brings once: `field` and `then` the first time, `repeat` (if any) every later
 * time, and `repeatOnce` (if any) the first time it repeats (the people who repeated).
 */
export interface OnceCount {
  field: string;
  then?: string[];
  repeat?: string;
  repeatOnce?: string;
}

/**
 * A journey's one current count (where it waits, and until when): it replaces the one the
 * journey had, which is taken back from its buckets, unless that one ranks higher (entries land
 * out of order: a later request's count is never replaced by an earlier one's).
 */
export interface CurrentCount {
  field: string;
  rank: number;
}

/** What one request adds: on its journey's start bucket, or on `at` when it belongs to no journey. */
export interface FunnelEntry {
  /** The journey's id (journey-id.ts); absent for a request refused before any journey began. */
  journey?: string;
  /** The bucket time: the journey's start, or the request's time without a journey. */
  at: number;
  once: OnceCount[];
  /** Counted on every request (refusals met, as requests). */
  always: string[];
  /** The journey's current count (only with a journey). */
  current?: CurrentCount;
}

export interface FunnelRange {
  /** Inclusive start and exclusive end, ms since the epoch, aligned to whole buckets. */
  from: number;
  to: number;
  resolution: 'minute' | 'hour';
}

export interface FunnelRead {
  /** Every journey that started in the range. */
  counts: FunnelCounts;
  range: FunnelRange;
  /** When it was read (ms): who waits past it has stopped. */
  at: number;
}

export interface FunnelStore {
  /** `nowMs`: the clock the journeys' sets expire by. Answers, per entry, the fields it added. */
  add(entries: readonly FunnelEntry[], nowMs: number): Promise<string[][]>;
  /** The counts of the journeys that started in `range` (aligned: alignRange). */
  read(range: FunnelRange, nowMs: number): Promise<FunnelRead>;
}

const SIZE = { minute: MINUTE_MS, hour: HOUR_MS } as const;

/**
 * A range as the buckets can hold it: `[from, to)`, its end rounded up to a whole bucket and its
 * start that many whole buckets before, so "the last 24 hours" is 24 hour buckets (the last one
 * still filling), never 25. `resolution` may be forced, so two ranges compared share it.
 */
export function alignRange(
  fromMs: number,
  toMs: number,
  nowMs: number,
  resolution?: FunnelRange['resolution'],
): FunnelRange {
  const chosen =
    resolution ??
    (toMs - fromMs <= MINUTE_READ_LIMIT_MS && fromMs >= nowMs - MINUTE_RETENTION_MS + HOUR_MS ? 'minute' : 'hour');
  const size = SIZE[chosen];
  const to = Math.ceil(toMs / size) * size;
  const from = to - Math.max(1, Math.ceil((toMs - fromMs) / size)) * size;
  return { from, to, resolution: chosen };
}

/** The bucket starts of an aligned range. */
export function bucketStarts(range: FunnelRange): number[] {
  const size = SIZE[range.resolution];
  const starts: number[] = [];
  for (let at = range.from; at < range.to; at += size) starts.push(at);
  return starts;
}

export const addInto = (into: FunnelCounts, counts: FunnelCounts): FunnelCounts => {
  for (const [field, n] of Object.entries(counts)) into[field] = (into[field] ?? 0) + n;
  return into;
};

/** The fields one entry adds, given which of its `once` counts its journey brings for the first time. */
export function fieldsOf(entry: FunnelEntry, isNew: (field: string) => boolean): string[] {
  const fields = [...entry.always];
  for (const once of entry.once) {
    if (isNew(once.field)) fields.push(once.field, ...(once.then ?? []));
    else {
      if (once.repeat) fields.push(once.repeat);
      if (once.repeatOnce && isNew(once.repeatOnce)) fields.push(once.repeatOnce);
    }
  }
  return fields;
}
