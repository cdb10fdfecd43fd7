import { LRUCache } from 'lru-cache';
import type { OtpRecordContext, OtpRecordEvent } from '../../../machines/otp-record.machine';
import { compileOtpRecordTable, stepOtpRecord } from '../../../machines/otp-record.table';
import { isE164 } from '../phone';
import {
  retainUntil,
  type ClaimResult,
  type IssueResult,
  type OtpPolicy,
  type OtpRecord,
  type OtpStore,
  type VerifyResult,
} from './store';

/*
 * OTP records in process memory. Each operation is get -> pure machine step -> set with no
 * `await` in between, so it is atomic within one Node process (not across instances: use the
 * Redis store for that). Bounded by `max_records` (least recently used records go first); a
 * record is kept EXPIRED_RETENTION_MS past its expiry, an end read from the record itself.
 */

export interface MemoryOtpStoreOptions {
  maxRecords: number;
  /** The clock record times are in (deps.now), so TTLs and expiry move together under a fake clock. */
  now?: () => number;
}

const HASH_BYTES = 32;
/*
 * Two binary forms, told apart by length, and text for whatever fits neither:
 * - compact, what the service writes (a code sent to its own key, a TTL in whole seconds): the
 *   32 hash bytes, sentAt as 5 bytes of ms since COMPACT_EPOCH, the life (expiresAt - sentAt) in
 *   seconds as 2 bytes, the wrong-guess count: 40 characters, which V8 stores in 56 B where 43
 *   took 64 (a one-byte string is a 16 B header and its characters rounded up to 8);
 * - wide: the hash, sentAt as a 48-bit integer, the life in ms as 32 bits, the count: 43
 *   characters, followed by where the code went when that is not the key itself.
 * Neither form drops a bit of the hash or of the times: a record that does not fit is stored wider.
 */
const COMPACT_EPOCH = Date.UTC(2020, 0, 1);
const COMPACT_SENT_AT = HASH_BYTES;
const COMPACT_LIFE = COMPACT_SENT_AT + 5;
const COMPACT_ATTEMPTS = COMPACT_LIFE + 2;
const COMPACT_BYTES = COMPACT_ATTEMPTS + 1;
const SENT_AT = HASH_BYTES;
/** The code's life in ms, 32 bits: up to 49 days, where the TTL is minutes. */
const LIFE = SENT_AT + 6;
const ATTEMPTS = LIFE + 4;
const PACKED_BYTES = ATTEMPTS + 1;
const HEX_HASH = /^[0-9a-f]{64}$/;
/** Marks a record kept as text (a hash that is not a 64-digit hex digest). */
const TEXT = '~';
const scratch = Buffer.alloc(PACKED_BYTES);
/**
 * A record that carries a funnel journey id (16 base64url characters, 12 bytes) starts with this
 * mark and the id's bytes, before either form: 13 characters more (a record of 53 takes 72 B).
 */
const JOURNEY = '`';
const JOURNEY_BYTES = 12;
const JOURNEY_ID = /^[A-Za-z0-9_-]{16}$/;

/** Where the code went, as stored: nothing when it went to the key itself (the common case costs no byte). */
const packTo = (record: OtpRecord, key: string) => (record.to === key ? '' : record.to);
const unpackTo = (stored: string, key: string) => (stored === '' ? key : stored);

const packText = (record: OtpRecord, key: string) =>
  `${TEXT}${record.hash}|${record.sentAt.toString(36)}|${record.expiresAt.toString(36)}|${record.attempts.toString(36)}|${packTo(record, key)}`;

const fitsCompact = (record: OtpRecord, to: string): boolean => {
  const since = record.sentAt - COMPACT_EPOCH;
  const life = record.expiresAt - record.sentAt;
  return (
    to === '' &&
    Number.isSafeInteger(since) &&
    since >= 0 &&
    since < 2 ** 40 &&
    Number.isSafeInteger(life) &&
    life >= 0 &&
    life % 1000 === 0 &&
    life / 1000 < 2 ** 16
  );
};

const fitsWide = (record: OtpRecord, to: string): boolean =>
  Number.isSafeInteger(record.sentAt) &&
  record.sentAt >= 0 &&
  record.sentAt < 2 ** 48 &&
  Number.isSafeInteger(record.expiresAt) &&
  record.expiresAt >= record.sentAt &&
  record.expiresAt - record.sentAt < 2 ** 32 &&
  Buffer.byteLength(to, 'latin1') === Buffer.byteLength(to, 'utf8');

/**
 * A record as one short flat string (docs/performance.md: memory per pending code): binary when
 * the hash is a hex SHA-256, as the service's always are, instead of a ~300 B object.
 */
export function packRecord(record: OtpRecord, key: string): string {
  const base = packBase(record, key);
  if (record.journey === undefined || !JOURNEY_ID.test(record.journey))
    return base.startsWith(JOURNEY) ? packText(record, key) : base;
  return JOURNEY + Buffer.from(record.journey, 'base64url').toString('latin1') + base;
}

function packBase(record: OtpRecord, key: string): string {
  const to = packTo(record, key);
  if (!HEX_HASH.test(record.hash) || !Number.isInteger(record.attempts) || record.attempts < 0 || record.attempts > 255)
    return packText(record, key);
  let packed: string;
  if (fitsCompact(record, to)) {
    scratch.write(record.hash, 0, 'hex');
    scratch.writeUIntBE(record.sentAt - COMPACT_EPOCH, COMPACT_SENT_AT, 5);
    scratch.writeUInt16BE((record.expiresAt - record.sentAt) / 1000, COMPACT_LIFE);
    scratch[COMPACT_ATTEMPTS] = record.attempts;
    packed = scratch.toString('latin1', 0, COMPACT_BYTES);
  } else if (fitsWide(record, to)) {
    // Written whole into one buffer, so the string is flat (a `+ to` would keep a tree of two parts).
    const buffer = to === '' ? scratch : Buffer.allocUnsafe(PACKED_BYTES + to.length);
    buffer.write(record.hash, 0, 'hex');
    buffer.writeUIntBE(record.sentAt, SENT_AT, 6);
    buffer.writeUInt32BE(record.expiresAt - record.sentAt, LIFE);
    buffer[ATTEMPTS] = record.attempts;
    buffer.write(to, PACKED_BYTES, 'latin1');
    packed = buffer.toString('latin1', 0, PACKED_BYTES + to.length);
  } else {
    return packText(record, key);
  }
  return packed.startsWith(TEXT) ? packText(record, key) : packed;
}

export function unpackRecord(packed: string, key: string): OtpRecord | null {
  if (!packed.startsWith(JOURNEY)) return unpackBase(packed, key);
  const record = unpackBase(packed.slice(1 + JOURNEY_BYTES), key);
  return (
    record && { ...record, journey: Buffer.from(packed.slice(1, 1 + JOURNEY_BYTES), 'latin1').toString('base64url') }
  );
}

function unpackBase(packed: string, key: string): OtpRecord | null {
  if (packed.startsWith(TEXT)) {
    const [hash, sentAt, expiresAt, attempts, to] = packed.slice(TEXT.length).split('|');
    if (!hash || sentAt === undefined || expiresAt === undefined || attempts === undefined || to === undefined)
      return null;
    return {
      hash,
      sentAt: parseInt(sentAt, 36),
      expiresAt: parseInt(expiresAt, 36),
      attempts: parseInt(attempts, 36),
      to: unpackTo(to, key),
    };
  }
  if (packed.length === COMPACT_BYTES) {
    scratch.write(packed, 0, COMPACT_BYTES, 'latin1');
    const sentAt = COMPACT_EPOCH + scratch.readUIntBE(COMPACT_SENT_AT, 5);
    return {
      hash: scratch.toString('hex', 0, HASH_BYTES),
      sentAt,
      expiresAt: sentAt + scratch.readUInt16BE(COMPACT_LIFE) * 1000,
      attempts: scratch[COMPACT_ATTEMPTS]!,
      to: key,
    };
  }
  if (packed.length < PACKED_BYTES) return null;
  scratch.write(packed, 0, PACKED_BYTES, 'latin1');
  const sentAt = scratch.readUIntBE(SENT_AT, 6);
  return {
    hash: scratch.toString('hex', 0, HASH_BYTES),
    sentAt,
    expiresAt: sentAt + scratch.readUInt32BE(LIFE),
    attempts: scratch[ATTEMPTS]!,
    to: unpackTo(packed.slice(PACKED_BYTES), key),
  };
}

/**
 * A flat copy of a key. V8 keeps a string built by concatenation (the phone library builds
 * E.164 as `'+' + code + digits`) as a tree of its parts; a cache entry holding such a key would
 * keep the whole tree alive for the record's life.
 */
const flatKey = (key: string): string => Buffer.from(key, 'utf8').toString('utf8');

/**
 * The records' cache key. A phone key in E.164 (what the service's phone keys always are) is
 * held as its digits' number: a 16 B heap number where the string took 32 B. Up to 15 digits fit
 * a double exactly, and without a leading zero distinct digits are distinct numbers; a Map never
 * takes a number for a string, so every other key, kept as a string, stays apart from them.
 */
const recordKey = (key: string): string | number => (isE164(key) ? Number(key.slice(1)) : key);

const emptyContext: OtpRecordContext = { record: null, previous: null, outcome: null, retryAfterMs: 0 };

export function createMemoryOtpStore(options: MemoryOtpStoreOptions): OtpStore & { clear(): void } {
  // The record machine compiled once (a few ms): each operation is a lookup, not a transition() (docs/performance.md).
  const table = compileOtpRecordTable();
  const step = (record: OtpRecord | null, event: OtpRecordEvent) =>
    stepOtpRecord(table, record ? { ...emptyContext, record } : emptyContext, event);

  const clock = options.now ?? Date.now;
  // maxSize with a unit size (rather than `max`) so memory grows with use instead of being
  // preallocated (`max` would hold 28 MB and take ~170 ms to build at the default 1,000,000). No TTL per entry: a record carries its own end (retainUntil), checked on
  // read against the operation's clock, so the cache keeps no two timestamps per entry beside
  // it (16 B of a ~200 B record). Nothing is lost: the cache never purged stale entries by
  // itself either, only on access or when the least recently used went.
  const cache = new LRUCache<string | number, string>({ maxSize: options.maxRecords, sizeCalculation: () => 1 });

  // Recipient cooldowns and spent proofs: short-lived markers beside the records, bounded the same way.
  // Read the clock on every check instead of caching it behind a timer per read.
  const markerCache = <V extends string | number | boolean>() =>
    new LRUCache<string, V>({
      maxSize: options.maxRecords,
      sizeCalculation: () => 1,
      perf: { now: clock },
      ttlResolution: 0,
    });
  const markers = markerCache<string>();
  const spent = markerCache<true>();
  const claims = markerCache<number>();
  const heldPhones = markerCache<string>();
  const phoneHolders = markerCache<string>();

  /** The record of `key` (cached under `id`, its recordKey), or null: none, or kept past its end at `now` (the caller's clock, as the machine's guards read it). */
  const read = (id: string | number, key: string, now?: number): OtpRecord | null => {
    const packed = cache.get(id);
    const record = packed === undefined ? null : unpackRecord(packed, key);
    if (record && now !== undefined && retainUntil(record) <= now) {
      cache.delete(id);
      return null;
    }
    return record;
  };

  /** Carries out the effects the machine named for one step on `key` (cached under `id`). */
  const apply = (id: string | number, key: string, effects: string[], context: OtpRecordContext) => {
    for (const effect of effects) {
      if (effect === 'deleteRecord') cache.delete(id);
      else if (effect === 'storeCode' && context.record)
        cache.set(typeof id === 'string' ? flatKey(id) : id, packRecord(context.record, key));
      else if ((effect === 'countWrongGuess' || effect === 'restorePrevious') && context.record)
        cache.set(id, packRecord(context.record, key));
    }
  };

  /** Everything forgotten at once: the sandbox's reset (POST /_sandbox/reset), and close. */
  const clear = () => {
    for (const held of [cache, markers, spent, claims, heldPhones, phoneHolders]) held.clear();
  };

  return {
    async issue(
      key: string,
      hash: string,
      now: number,
      policy: OtpPolicy,
      to: string = key,
      journey?: string,
    ): Promise<IssueResult> {
      const id = recordKey(key);
      const current = read(id, key, now);
      const { context, effects } = step(current, {
        type: 'GENERATE',
        now,
        hash,
        to,
        policy,
        ...(journey ? { journey } : {}),
      });
      if (context.outcome === 'blocked' || !context.record)
        return {
          status: 'blocked',
          retryAfterMs: Math.max(1, context.retryAfterMs),
          ...(current?.journey ? { journey: current.journey } : {}),
        };
      apply(id, key, effects, context);
      return { status: 'issued', record: context.record, previous: context.previous };
    },

    async journeyOf(key: string, now: number): Promise<string | undefined> {
      const record = read(recordKey(key), key, now);
      return record && now < record.expiresAt ? record.journey : undefined;
    },

    async revert(key: string, hash: string, previous: OtpRecord | null): Promise<boolean> {
      const id = recordKey(key);
      const { context, effects } = step(read(id, key), { type: 'SEND_FAILED', hash, previous });
      apply(id, key, effects, context);
      return context.outcome === 'reverted';
    },

    async verify(key: string, hash: string, now: number, policy: OtpPolicy): Promise<VerifyResult> {
      const id = recordKey(key);
      const record = read(id, key, now);
      const { context, effects } = step(record, { type: 'VERIFY', now, hash, policy });
      apply(id, key, effects, context);
      const outcome = context.outcome;
      const journey = record?.journey ? { journey: record.journey } : {};
      if (outcome === 'ok' && record) return { outcome, to: record.to, sentAt: record.sentAt, ...journey };
      return { outcome: outcome === 'expired' || outcome === 'too_many_attempts' ? outcome : 'invalid', ...journey };
    },

    async claimRecipient(address: string, token: string, cooldownMs: number): Promise<ClaimResult> {
      // The marker says until when, read against the same clock as the records' cooldown (`now - sentAt < cooldown`).
      const now = clock();
      const holder = markers.get(address);
      const until = holder === undefined ? 0 : Number(holder.slice(0, holder.indexOf('|')));
      if (until > now) return { claimed: false, retryAfterMs: until - now };
      markers.set(flatKey(address), `${now + cooldownMs}|${token}`, { ttl: cooldownMs + 1 });
      return { claimed: true };
    },

    async releaseRecipient(address: string, token: string) {
      if (markers.get(address)?.endsWith(`|${token}`)) markers.delete(address);
    },

    async clearRecipient(address: string) {
      markers.delete(address);
    },

    async spendProof(id: string, untilMs: number) {
      if (spent.has(id)) return false;
      spent.set(id, true, { ttl: Math.max(1, untilMs - clock()) });
      return true;
    },

    async unspendProof(id: string) {
      spent.delete(id);
    },

    async markAccountClaimed(uid: string, atMs: number, ttlMs: number) {
      claims.set(flatKey(uid), atMs, { ttl: ttlMs });
    },

    async accountClaimedAt(uid: string) {
      return claims.get(uid) ?? null;
    },

    async holdPhone(uid: string, phone: string, ttlMs: number) {
      phoneHolders.set(flatKey(phone), uid, { ttl: ttlMs });
      heldPhones.set(flatKey(uid), phone, { ttl: ttlMs });
    },

    async heldPhoneOf(uid: string) {
      return heldPhones.get(uid) ?? null;
    },

    async phoneHeldFor(phone: string) {
      return phoneHolders.get(phone) ?? null;
    },

    async releasePhone(uid: string) {
      const phone = heldPhones.get(uid);
      heldPhones.delete(uid);
      if (phone !== undefined && phoneHolders.get(phone) === uid) phoneHolders.delete(phone);
    },

    async ping() {
      return true;
    },

    clear,

    async close() {
      clear();
    },
  };
}
