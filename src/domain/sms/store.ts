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

/** One code sent: what the operator sees. Never the plain recipient, never the code. */
export interface LedgerEntry {
  id: string;
  channel: 'sms' | 'email';
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
  accepted_at: number;
  /** When a receipt asked for is late (accepted_at + `sms.receipts.timeout_seconds`); absent when none was asked for. */
  receipt_due_at?: number;
  delivered_at?: number;
  failed_at?: number;
  error_code?: string;
  verified_at?: number;
  /** When the next code for this phone also went to the account's email because this one did not arrive. */
  fallback_at?: number;
}

export type LedgerUpdate = Partial<Pick<LedgerEntry, 'delivered_at' | 'failed_at' | 'error_code' | 'verified_at' | 'fallback_at'>>;

export interface SmsStore {
  addEntry(entry: LedgerEntry, retentionMs: number, now: number): Promise<void>;
  /** Sets fields of an entry that still exists; null when it is gone. */
  updateEntry(id: string, update: LedgerUpdate): Promise<LedgerEntry | null>;
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
}

const NUMBER_FIELDS = ['accepted_at', 'receipt_due_at', 'delivered_at', 'failed_at', 'verified_at', 'fallback_at'] as const;

function fromHash(hash: Record<string, string>): LedgerEntry | null {
  if (!hash.id) return null;
  const entry: Record<string, unknown> = { ...hash };
  for (const field of NUMBER_FIELDS) if (hash[field] !== undefined) entry[field] = Number(hash[field]);
  return entry as unknown as LedgerEntry;
}

export function createMemorySmsStore(options: { maxEntries: number }): SmsStore {
  const entries = new LRUCache<string, LedgerEntry>({ max: options.maxEntries });
  const latest = new LRUCache<string, string>({ max: options.maxEntries });
  const counters = new LRUCache<string, { count: number; resetAt: number }>({ max: 100_000 });
  const blocked = new Map<string, number>();
  const live = (until: number, now: number) => until > now;
  return {
    async addEntry(entry, retentionMs) {
      entries.set(entry.id, { ...entry }, { ttl: retentionMs });
    },
    async updateEntry(id, update) {
      const entry = entries.get(id, { updateAgeOnGet: false });
      if (!entry) return null;
      Object.assign(entry, update);
      return { ...entry };
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
      return [...blocked].filter(([range, until]) => (live(until, now) ? true : (blocked.delete(range), false))).map(([range, until]) => ({ range, until }));
    },
  };
}

// Sets fields of an entry only while it exists: a late receipt must not resurrect an expired entry without its expiry.
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
redis.call('HSET', KEYS[1], unpack(ARGV))
return redis.call('HGETALL', KEYS[1])
`;
// One round trip: count the hit and start the window on the first one (as the rate limiter's).
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`;

type Scripts = {
  lfaSmsUpdate(key: string, ...fields: string[]): Promise<string[] | null>;
  lfaSmsIncrement(key: string, windowMs: number): Promise<number>;
};

export function createRedisSmsStore(redis: RedisConnection, prefix: string): SmsStore {
  redis.defineCommand('lfaSmsUpdate', { numberOfKeys: 1, lua: UPDATE });
  redis.defineCommand('lfaSmsIncrement', { numberOfKeys: 1, lua: INCREMENT });
  const scripts = redis as unknown as Scripts;
  const entryKey = (id: string) => `${prefix}sms:entry:${id}`;
  const index = `${prefix}sms:ledger`;
  const blockIndex = `${prefix}sms:blocks`;
  const blockKey = (range: string) => `${prefix}sms:block:${range}`;
  // Redis away is the store's 503, as for the codes, never a 500.
  const guarded = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (err) {
      throw storeUnavailable(err);
    }
  };
  const pairs = (update: Record<string, unknown>) => Object.entries(update).flatMap(([key, value]) => (value === undefined ? [] : [key, String(value)]));
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
    entry: (id) => guarded(async () => fromHash(await redis.hgetall(entryKey(id)))),
    entriesSince: (since, limit) =>
      guarded(async () => {
        const ids = await redis.zrevrangebyscore(index, '+inf', String(since), 'LIMIT', 0, limit);
        const found = await Promise.all(ids.map(async (id) => fromHash(await redis.hgetall(entryKey(id)))));
        return found.filter((e): e is LedgerEntry => e !== null).sort((a, b) => a.accepted_at - b.accepted_at);
      }),
    setLatest: (recipient, id, ttlMs) => guarded(async () => void (await redis.set(`${prefix}sms:latest:${recipient}`, id, 'PX', ttlMs))),
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
  };
}
