import { LRUCache } from 'lru-cache';
import type { RedisConnection } from '../../core/redis';
import { storeUnavailable } from '../otp/errors';

/*
 * Where the SMS side keeps its state, in the store the codes use (memory, or Redis: one server
 * or a Cluster): the message ledger, the counters of the pumping defence, and the blocked
 * ranges. Every Redis command and script names one key, so each runs on whichever Cluster node
 * holds it; nothing here needs two keys in one slot. Separate from the OTP store on purpose:
 * this is the operator's record of what was sent, not the codes' lifecycle.
 */

/**
 * Why no provider took a message, by the last one asked: it `refused` it (it answered: a bad
 * number, not on WhatsApp, a template rejected), answered an `error` (5xx, 429), gave `no_answer`
 * (a timeout, a dropped connection), or was not asked, its circuit open (`circuit_open`); or no
 * provider serves the country at all (`no_provider`).
 */
export const NOT_SENT_REASONS = ['refused', 'error', 'no_answer', 'circuit_open', 'no_provider'] as const;
export type NotSentReason = (typeof NOT_SENT_REASONS)[number];

/** One code sent, or tried and taken by no provider: what the operator sees. Never the plain recipient, never the code. */
export interface LedgerEntry {
  id: string;
  /** How it went: by SMS, by WhatsApp (both to a phone), or by mail. */
  channel: 'sms' | 'whatsapp' | 'email';
  /** Masked (`+39333*****67`, `g***@example.com`). */
  recipient: string;
  /** ISO region of the number; empty for email. */
  country: string;
  /** libphonenumber's type (MOBILE, FIXED_LINE_OR_MOBILE); empty for email. */
  number_type: string;
  /** The first `sms.pumping.prefix_digits` digits of the E.164 number; empty for email. */
  range: string;
  provider: string;
  message_id?: string;
  /** When it was accepted; for a message no provider took, when it was tried. */
  accepted_at: number;
  /** No provider took it (the send answered `delivery_failed` unless another channel took the code): why, by the last provider asked. */
  not_sent?: NotSentReason;
  /** When a receipt asked for is late (accepted_at + `sms.receipts.timeout_seconds`); absent when none was asked for. */
  receipt_due_at?: number;
  delivered_at?: number;
  /** When a WhatsApp receipt said the message was read (it was delivered too). */
  read_at?: number;
  failed_at?: number;
  error_code?: string;
  verified_at?: number;
  /** When the next code for this phone also went to the account's email because this one did not arrive. */
  fallback_at?: number;
}

/**
 * What a range's conversion is judged on (pumping.ts): codes counted by the second they were
 * sent, and judged only once `graceMs` has passed since that second ended, when their outcome is
 * known; judged codes are summed per window of `windowMs` (by the time they were judged), this
 * window and the one before. A verification counts for the second its code was sent.
 */
export interface RangeJudging {
  graceMs: number;
  windowMs: number;
}

/** One change to a range's figures: a code sent, a send taken back (refused after all), a code verified (by when it was sent). */
type RangeEvent = { kind: 'sent' | 'unsent' | 'verified'; at: number };

export interface RangeTally {
  /** Codes judged (past the grace) in this window and the one before. */
  sends: number;
  /** Of those, the ones verified (so far: a late verification still counts). */
  verified: number;
  /** When the range was put on watch (pumping.ts), or null. */
  watchedSince: number | null;
}

export type LedgerUpdate = Partial<
  Pick<LedgerEntry, 'delivered_at' | 'read_at' | 'failed_at' | 'error_code' | 'verified_at' | 'fallback_at'>
>;

export interface SmsStore {
  addEntry(entry: LedgerEntry, retentionMs: number, now: number): Promise<void>;
  /** Sets fields of an entry that still exists; null when it is gone. */
  updateEntry(id: string, update: LedgerUpdate): Promise<LedgerEntry | null>;
  /**
   * Records a fact about an entry once, in one atomic step: when the entry has `field` already
   * (a receipt or a verification recorded before, a replay), nothing changes; otherwise the
   * fields of `update` not set yet are set. The entry as it is after, and whether it changed;
   * null when it is gone.
   */
  recordOnce(
    id: string,
    field: keyof LedgerUpdate,
    update: LedgerUpdate,
  ): Promise<{ entry: LedgerEntry; changed: boolean } | null>;
  entry(id: string): Promise<LedgerEntry | null>;
  /** Entries accepted at or after `since`, oldest first, at most `limit`. */
  entriesSince(since: number, limit: number): Promise<LedgerEntry[]>;
  /** The newest entry id for a recipient, by a keyed digest of the address (never the address). */
  setLatest(recipient: string, id: string, ttlMs: number): Promise<void>;
  latest(recipient: string): Promise<string | null>;
  /** Counts one in a fixed window of `windowMs`; answers the count so far in this window. */
  increment(key: string, windowMs: number, now: number): Promise<number>;
  count(key: string, now: number): Promise<number>;
  block(range: string, until: number, now: number): Promise<void>;
  blockedUntil(range: string, now: number): Promise<number | null>;
  /** Lifts a block; false when there was none. */
  unblock(range: string): Promise<boolean>;
  blocks(now: number): Promise<Array<{ range: string; until: number }>>;
  /** Records `event` (if any) in the range's figures and answers its judged figures, in one round trip. */
  tally(range: string, now: number, event: RangeEvent | null, judging: RangeJudging): Promise<RangeTally>;
  /** Puts a range on watch since a time, or takes it off (null). Kept as long as its figures. */
  watch(range: string, since: number | null, now: number, judging: RangeJudging): Promise<void>;
  /** Forgets a range's figures and watch: it starts afresh (an operator lifted its block). */
  forget(range: string): Promise<void>;
}

const SLOT_MS = 1000;
/** How long a range's figures live without a change: the two judged windows, and the codes not judged yet. */
const figuresTtl = ({ graceMs, windowMs }: RangeJudging) => 2 * windowMs + graceMs + SLOT_MS;

/**
 * When each range's figures next change by time alone: the first of its codes to come of age
 * (judged) or of its judged windows to fall out. Until then tallyFields' sweep would change
 * nothing, so it is skipped: a busy range keeps a minute of per-second fields, and sweeping them
 * on every send (twice with the bot challenge adaptive, which reads them too) was most of what
 * the challenge cost a send.
 */
const sweepDue = new WeakMap<Map<string, number>, number>();

/** The time from which the sweep would change a field of `name`, by the TALLY script's rules. */
function changesAt(name: string, { graceMs, windowMs }: RangeJudging): number {
  const [kind, n] = name.split(':');
  const index = Number(n);
  if (kind === 's' || kind === 'v') return (index + 1) * SLOT_MS + graceMs;
  if (kind === 'js' || kind === 'jv') return (index + 2) * windowMs;
  return Infinity;
}

/** The memory store's copy of the TALLY script below, over a Map of the same fields. */
function tallyFields(
  fields: Map<string, number>,
  now: number,
  event: RangeEvent | null,
  judging: RangeJudging,
): RangeTally {
  const { graceMs, windowMs } = judging;
  const current = Math.floor(now / windowMs);
  const judgedAt = (slot: number) => (slot + 1) * SLOT_MS + graceMs;
  const add = (name: string, by: number) => {
    fields.set(name, (fields.get(name) ?? 0) + by);
    sweepDue.set(fields, Math.min(sweepDue.get(fields) ?? Infinity, changesAt(name, judging)));
  };
  if (event) {
    const slot = Math.floor(event.at / SLOT_MS);
    const field = event.kind === 'verified' ? 'v' : 's';
    const by = event.kind === 'unsent' ? -1 : 1;
    if (judgedAt(slot) > now) add(`${field}:${slot}`, by);
    else if (Math.floor(judgedAt(slot) / windowMs) >= current - 1)
      add(`j${field}:${Math.floor(judgedAt(slot) / windowMs)}`, by);
  }
  if (now >= (sweepDue.get(fields) ?? -Infinity)) {
    for (const [name, value] of [...fields]) {
      const [kind, n] = name.split(':');
      const index = Number(n);
      if (kind === 's' || kind === 'v') {
        if (judgedAt(index) > now) continue;
        const window = Math.floor(judgedAt(index) / windowMs);
        if (window >= current - 1) fields.set(`j${kind}:${window}`, (fields.get(`j${kind}:${window}`) ?? 0) + value);
        fields.delete(name);
      } else if ((kind === 'js' || kind === 'jv') && index < current - 1) fields.delete(name);
    }
    let due = Infinity;
    for (const name of fields.keys()) due = Math.min(due, changesAt(name, judging));
    sweepDue.set(fields, due);
  }
  const sum = (kind: string) => (fields.get(`${kind}:${current}`) ?? 0) + (fields.get(`${kind}:${current - 1}`) ?? 0);
  return { sends: sum('js'), verified: sum('jv'), watchedSince: fields.get('watch') ?? null };
}

const NUMBER_FIELDS = [
  'accepted_at',
  'receipt_due_at',
  'delivered_at',
  'read_at',
  'failed_at',
  'verified_at',
  'fallback_at',
] as const;

function fromHash(hash: Record<string, string>): LedgerEntry | null {
  if (!hash.id) return null;
  const entry: Record<string, unknown> = { ...hash };
  for (const field of NUMBER_FIELDS) if (hash[field] !== undefined) entry[field] = Number(hash[field]);
  return entry as unknown as LedgerEntry;
}

export function createMemorySmsStore(options: { maxEntries: number }): SmsStore & { clear(): void } {
  // maxSize with a unit size rather than `max`, which preallocates every slot (~190 ms of CPU for
  // these four at the default sizes): memory grows with use, bounded the same.
  const bounded = <V extends object | string>(entriesMax: number) =>
    new LRUCache<string, V>({ maxSize: entriesMax, sizeCalculation: () => 1 });
  const entries = bounded<LedgerEntry>(options.maxEntries);
  const latest = bounded<string>(options.maxEntries);
  const counters = bounded<{ count: number; resetAt: number }>(100_000);
  const blocked = new Map<string, number>();
  const figures = bounded<Map<string, number>>(100_000);
  const figuresOf = (range: string, judging: RangeJudging) => {
    let fields = figures.get(range);
    if (!fields) figures.set(range, (fields = new Map()), { ttl: figuresTtl(judging) });
    else figures.set(range, fields, { ttl: figuresTtl(judging) });
    return fields;
  };
  const live = (until: number, now: number) => until > now;
  return {
    /** The ledger, the counters and the blocks forgotten: the sandbox's reset (POST /_sandbox/reset). */
    clear() {
      for (const held of [entries, latest, counters, blocked, figures]) held.clear();
    },
    async addEntry(entry, retentionMs) {
      entries.set(entry.id, { ...entry }, { ttl: retentionMs });
    },
    async updateEntry(id, update) {
      const entry = entries.get(id, { updateAgeOnGet: false });
      if (!entry) return null;
      Object.assign(entry, update);
      return { ...entry };
    },
    async recordOnce(id, field, update) {
      const entry = entries.get(id, { updateAgeOnGet: false });
      if (!entry) return null;
      if (entry[field] !== undefined) return { entry: { ...entry }, changed: false };
      for (const [key, value] of Object.entries(update) as Array<
        [keyof LedgerUpdate, LedgerEntry[keyof LedgerUpdate]]
      >) {
        if (value !== undefined && entry[key] === undefined) Object.assign(entry, { [key]: value });
      }
      return { entry: { ...entry }, changed: true };
    },
    async entry(id) {
      const entry = entries.get(id);
      return entry ? { ...entry } : null;
    },
    async entriesSince(since, limit) {
      const found: LedgerEntry[] = [];
      for (const entry of entries.values()) if (entry.accepted_at >= since) found.push({ ...entry });
      return found.sort((a, b) => a.accepted_at - b.accepted_at).slice(-limit);
    },
    async setLatest(recipient, id, ttlMs) {
      latest.set(recipient, id, { ttl: ttlMs });
    },
    async latest(recipient) {
      return latest.get(recipient) ?? null;
    },
    async increment(key, windowMs, now) {
      let counter = counters.get(key);
      if (!counter || counter.resetAt <= now) counters.set(key, (counter = { count: 0, resetAt: now + windowMs }));
      counter.count += 1;
      return counter.count;
    },
    async count(key, now) {
      const counter = counters.get(key);
      return counter && counter.resetAt > now ? counter.count : 0;
    },
    async block(range, until) {
      blocked.set(range, until);
    },
    async blockedUntil(range, now) {
      const until = blocked.get(range);
      if (until === undefined) return null;
      if (live(until, now)) return until;
      blocked.delete(range);
      return null;
    },
    async unblock(range) {
      return blocked.delete(range);
    },
    async blocks(now) {
      return [...blocked]
        .filter(([range, until]) => (live(until, now) ? true : (blocked.delete(range), false)))
        .map(([range, until]) => ({ range, until }));
    },
    async tally(range, now, event, judging) {
      return tallyFields(figuresOf(range, judging), now, event, judging);
    },
    async watch(range, since, _now, judging) {
      const fields = figuresOf(range, judging);
      if (since === null) fields.delete('watch');
      else fields.set('watch', since);
    },
    async forget(range) {
      figures.delete(range);
    },
  };
}

// Sets fields of an entry only while it exists: a late receipt must not resurrect an expired entry without its expiry.
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
redis.call('HSET', KEYS[1], unpack(ARGV))
return redis.call('HGETALL', KEYS[1])
`;
// Records a fact once: nothing when the entry is gone (nil) or already has ARGV[1] (0, a replay);
// else each field of the rest of ARGV not set yet is set (1). The entry after, either way.
const RECORD_ONCE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return { 0, redis.call('HGETALL', KEYS[1]) } end
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
return { 1, redis.call('HGETALL', KEYS[1]) }
`;
// One round trip: count the hit and start the window on the first one (as the rate limiter's).
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`;

// A range's figures in one hash (so one key, on one Cluster node): `s:<second>` and `v:<second>`
// for codes not judged yet, `js:<window>` and `jv:<window>` for judged ones, `watch`. Records the
// event, moves every second past the grace into its window, drops windows older than the one
// before, and answers the judged sums and the watch. ARGV: now, grace, window, ttl, kind, at.
const TALLY = `
local now, grace, win = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local current = math.floor(now / win)
local function judgedAt(slot) return (slot + 1) * 1000 + grace end
local function windowOf(slot) return string.format('%d', math.floor(judgedAt(slot) / win)) end
if ARGV[5] ~= '' then
  local slot = math.floor(tonumber(ARGV[6]) / 1000)
  local field = ARGV[5] == 'verified' and 'v' or 's'
  local by = ARGV[5] == 'unsent' and -1 or 1
  if judgedAt(slot) > now then redis.call('HINCRBY', KEYS[1], field .. ':' .. string.format('%d', slot), by)
  elseif tonumber(windowOf(slot)) >= current - 1 then redis.call('HINCRBY', KEYS[1], 'j' .. field .. ':' .. windowOf(slot), by) end
end
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat, 2 do
  local kind, n = string.match(flat[i], '^(%a+):(%d+)$')
  local index = tonumber(n)
  if (kind == 's' or kind == 'v') and judgedAt(index) <= now then
    if tonumber(windowOf(index)) >= current - 1 then redis.call('HINCRBY', KEYS[1], 'j' .. kind .. ':' .. windowOf(index), flat[i + 1]) end
    redis.call('HDEL', KEYS[1], flat[i])
  elseif (kind == 'js' or kind == 'jv') and index < current - 1 then
    redis.call('HDEL', KEYS[1], flat[i])
  end
end
local c, p = string.format('%d', current), string.format('%d', current - 1)
local got = redis.call('HMGET', KEYS[1], 'js:' .. c, 'js:' .. p, 'jv:' .. c, 'jv:' .. p, 'watch')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { (tonumber(got[1]) or 0) + (tonumber(got[2]) or 0), (tonumber(got[3]) or 0) + (tonumber(got[4]) or 0), got[5] or '' }
`;

type Scripts = {
  lfaSmsTally(
    key: string,
    now: number,
    graceMs: number,
    windowMs: number,
    ttlMs: number,
    kind: string,
    at: number | string,
  ): Promise<[number, number, string]>;
  lfaSmsUpdate(key: string, ...fields: string[]): Promise<string[] | null>;
  lfaSmsRecordOnce(key: string, field: string, ...fields: string[]): Promise<[number, string[]] | null>;
  lfaSmsIncrement(key: string, windowMs: number): Promise<number>;
};

export function createRedisSmsStore(redis: RedisConnection, prefix: string): SmsStore {
  redis.defineCommand('lfaSmsUpdate', { numberOfKeys: 1, lua: UPDATE });
  redis.defineCommand('lfaSmsRecordOnce', { numberOfKeys: 1, lua: RECORD_ONCE });
  redis.defineCommand('lfaSmsIncrement', { numberOfKeys: 1, lua: INCREMENT });
  redis.defineCommand('lfaSmsTally', { numberOfKeys: 1, lua: TALLY });
  const scripts = redis as unknown as Scripts;
  const entryKey = (id: string) => `${prefix}sms:entry:${id}`;
  const index = `${prefix}sms:ledger`;
  const blockIndex = `${prefix}sms:blocks`;
  const blockKey = (range: string) => `${prefix}sms:block:${range}`;
  const figuresKey = (range: string) => `${prefix}sms:range:${range}`;
  // Redis away is the store's 503, as for the codes, never a 500.
  const guarded = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (err) {
      throw storeUnavailable(err);
    }
  };
  const pairs = (update: Record<string, unknown>) =>
    Object.entries(update).flatMap(([key, value]) => (value === undefined ? [] : [key, String(value)]));
  const toHash = (flat: string[]) => {
    const hash: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
    return hash;
  };
  return {
    addEntry: (entry, retentionMs, now) =>
      guarded(async () => {
        // Sent together, one round trip on the send path; the two commands on the entry's key reach its node in order.
        await Promise.all([
          redis.hset(entryKey(entry.id), ...pairs(entry as unknown as Record<string, unknown>)),
          redis.pexpire(entryKey(entry.id), retentionMs),
          redis.zadd(index, entry.accepted_at, entry.id),
          // The index forgets what the entries have: retention bounds both.
          redis.zremrangebyscore(index, '-inf', String(now - retentionMs)),
        ]);
      }),
    updateEntry: (id, update) =>
      guarded(async () => {
        const flat = await scripts.lfaSmsUpdate(entryKey(id), ...pairs(update));
        return flat ? fromHash(toHash(flat)) : null;
      }),
    recordOnce: (id, field, update) =>
      guarded(async () => {
        const answer = await scripts.lfaSmsRecordOnce(entryKey(id), field, ...pairs(update));
        const entry = answer ? fromHash(toHash(answer[1])) : null;
        return entry ? { entry, changed: Number(answer![0]) === 1 } : null;
      }),
    entry: (id) => guarded(async () => fromHash(await redis.hgetall(entryKey(id)))),
    entriesSince: (since, limit) =>
      guarded(async () => {
        const ids = await redis.zrevrangebyscore(index, '+inf', String(since), 'LIMIT', 0, limit);
        const found = await Promise.all(ids.map(async (id) => fromHash(await redis.hgetall(entryKey(id)))));
        return found.filter((e): e is LedgerEntry => e !== null).sort((a, b) => a.accepted_at - b.accepted_at);
      }),
    setLatest: (recipient, id, ttlMs) =>
      guarded(async () => void (await redis.set(`${prefix}sms:latest:${recipient}`, id, 'PX', ttlMs))),
    latest: (recipient) => guarded(() => redis.get(`${prefix}sms:latest:${recipient}`)),
    increment: (key, windowMs) => guarded(() => scripts.lfaSmsIncrement(`${prefix}sms:count:${key}`, windowMs)),
    count: (key) => guarded(async () => Number((await redis.get(`${prefix}sms:count:${key}`)) ?? 0)),
    block: (range, until, now) =>
      guarded(async () => {
        await redis.set(blockKey(range), String(until), 'PX', Math.max(1, until - now));
        await redis.sadd(blockIndex, range);
      }),
    blockedUntil: (range) =>
      guarded(async () => {
        const until = await redis.get(blockKey(range));
        return until === null ? null : Number(until);
      }),
    unblock: (range) =>
      guarded(async () => {
        await redis.srem(blockIndex, range);
        return (await redis.del(blockKey(range))) > 0;
      }),
    blocks: () =>
      guarded(async () => {
        const ranges = await redis.smembers(blockIndex);
        const found: Array<{ range: string; until: number }> = [];
        for (const range of ranges) {
          const until = await redis.get(blockKey(range));
          if (until === null) await redis.srem(blockIndex, range);
          else found.push({ range, until: Number(until) });
        }
        return found;
      }),
    tally: (range, now, event, judging) =>
      guarded(async () => {
        const [sends, verified, watch] = await scripts.lfaSmsTally(
          figuresKey(range),
          now,
          judging.graceMs,
          judging.windowMs,
          figuresTtl(judging),
          event?.kind ?? '',
          event?.at ?? '',
        );
        return { sends: Number(sends), verified: Number(verified), watchedSince: watch === '' ? null : Number(watch) };
      }),
    watch: (range, since, _now, judging) =>
      guarded(async () => {
        // The watch lives with the figures that raised it: set, it keeps their expiry (refreshed by every send).
        if (since === null) await redis.hdel(figuresKey(range), 'watch');
        else
          await Promise.all([
            redis.hset(figuresKey(range), 'watch', String(since)),
            redis.pexpire(figuresKey(range), figuresTtl(judging)),
          ]);
      }),
    forget: (range) => guarded(async () => void (await redis.del(figuresKey(range)))),
  };
}
