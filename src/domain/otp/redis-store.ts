import { redisAnswers, type RedisConnection } from '../../core/redis';
import {
  EXPIRED_RETENTION_MS,
  type ClaimResult,
  type IssueResult,
  type OtpPolicy,
  type OtpRecord,
  type OtpStore,
  type VerifyOutcome,
  type VerifyResult,
} from './store';

/*
 * OTP records in Redis, shared by every instance. Each store operation is ONE Lua script, so it
 * is atomic on the server: two instances can never both send a code for one key within the
 * cooldown, nor both accept one code. Each touches one key, so it runs unchanged on a Redis
 * Cluster (its key is its slot); a second key in a script would need a shared hash tag. The scripts implement the OTP record machine's table
 * (machines/otp-record.machine.ts) step for step; the shared contract suite
 * (test/domain/otp/store-contract.ts) holds both stores to the same behaviour.
 *
 * Records are `hash|sentAt|expiresAt|attempts|to[|journey]` (decimal ms; `to` where the code went;
 * `journey` the funnel's anonymous journey id, when a flow asked for the code; a
 * record written before `to` existed has none, and its code proves no address), kept EXPIRED_RETENTION_MS past
 * expiry by the key's own TTL. Time comes from the caller (`now`), as in the memory store.
 * Digest comparison in Lua is not constant-time; it compares HMACs of the guess, which an
 * attacker cannot steer byte by byte, so timing reveals nothing usable.
 */

const PARSE = `
local function parse(packed)
  local hash, sentAt, expiresAt, attempts, to, journey = string.match(packed, '^([^|]+)|(%d+)|(%d+)|(%d+)|?([^|]*)|?([^|]*)$')
  if not hash then return nil end
  return { hash = hash, sentAt = tonumber(sentAt), expiresAt = tonumber(expiresAt), attempts = tonumber(attempts), to = to, journey = journey }
end
local function pack(r)
  local packed = r.hash .. '|' .. string.format('%d', r.sentAt) .. '|' .. string.format('%d', r.expiresAt) .. '|' .. string.format('%d', r.attempts) .. '|' .. r.to
  if r.journey and r.journey ~= '' then return packed .. '|' .. r.journey end
  return packed
end
`;

// ARGV: hash, now, ttlMs, cooldownMs, retentionMs, to, maxAttempts, journey ('' for none)
const ISSUE = `${PARSE}
local now, ttl, cooldown, retention, maxAttempts = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[7])
local packed = redis.call('GET', KEYS[1])
local current = packed and parse(packed)
local attempts = 0
local journey = ARGV[8]
if current and now < current.expiresAt then
  if now - current.sentAt < cooldown then return { 'blocked', string.format('%d', current.sentAt + cooldown - now), current.journey } end
  attempts = math.min(current.attempts, maxAttempts - 1)
  if current.journey ~= '' then journey = current.journey end
end
local record = { hash = ARGV[1], sentAt = now, expiresAt = now + ttl, attempts = attempts, to = ARGV[6], journey = journey }
local stored = pack(record)
redis.call('SET', KEYS[1], stored, 'PX', ttl + retention)
return { 'issued', stored, current and pack(current) or '' }
`;

// ARGV: hash, previous ('' for none)
const REVERT = `${PARSE}
local packed = redis.call('GET', KEYS[1])
local current = packed and parse(packed)
if not current or current.hash ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]); return 1 end
local previous = parse(ARGV[2])
previous.attempts = math.max(previous.attempts, current.attempts)
redis.call('SET', KEYS[1], pack(previous), 'KEEPTTL')
return 1
`;

// ARGV: hash, now, maxAttempts
const VERIFY = `${PARSE}
local now, maxAttempts = tonumber(ARGV[2]), tonumber(ARGV[3])
local packed = redis.call('GET', KEYS[1])
local current = packed and parse(packed)
if not current then return { 'invalid' } end
if now >= current.expiresAt then return { 'expired', current.journey } end
if current.attempts >= maxAttempts then return { 'too_many_attempts', current.journey } end
if current.hash == ARGV[1] then redis.call('DEL', KEYS[1]); return { 'ok', current.journey, current.to, string.format('%d', current.sentAt) } end
current.attempts = current.attempts + 1
redis.call('SET', KEYS[1], pack(current), 'KEEPTTL')
if current.attempts >= maxAttempts then return { 'too_many_attempts', current.journey } end
return { 'invalid', current.journey }
`;

// ARGV: token, cooldownMs. Answers -1 when claimed, else the holder's time left (ms).
const CLAIM = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return -1 end
return redis.call('PTTL', KEYS[1])
`;

// ARGV: token
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

function unpack(packed: string): OtpRecord {
  const [hash, sentAt, expiresAt, attempts, to, journey] = packed.split('|');
  return {
    hash: hash!,
    sentAt: Number(sentAt),
    expiresAt: Number(expiresAt),
    attempts: Number(attempts),
    to: to ?? '',
    ...(journey ? { journey } : {}),
  };
}

const pack = (record: OtpRecord) =>
  `${record.hash}|${record.sentAt}|${record.expiresAt}|${record.attempts}|${record.to}${record.journey ? `|${record.journey}` : ''}`;

interface OtpScripts {
  lfaOtpIssue(
    key: string,
    hash: string,
    now: number,
    ttlMs: number,
    cooldownMs: number,
    retentionMs: number,
    to: string,
    maxAttempts: number,
    journey: string,
  ): Promise<[string, string, string?]>;
  lfaOtpRevert(key: string, hash: string, previous: string): Promise<number>;
  lfaOtpVerify(
    key: string,
    hash: string,
    now: number,
    maxAttempts: number,
  ): Promise<[string, string?, string?, string?]>;
  lfaOtpClaim(key: string, token: string, cooldownMs: number): Promise<number>;
  lfaOtpRelease(key: string, token: string): Promise<number>;
}

export interface RedisOtpStoreOptions {
  /** Namespace of every key (`redis.key_prefix`). */
  prefix: string;
  /** Whether `close` also closes the connection (false when it is shared). */
  ownsConnection?: boolean;
}

export function createRedisOtpStore(redis: RedisConnection, options: RedisOtpStoreOptions): OtpStore {
  redis.defineCommand('lfaOtpIssue', { numberOfKeys: 1, lua: ISSUE });
  redis.defineCommand('lfaOtpRevert', { numberOfKeys: 1, lua: REVERT });
  redis.defineCommand('lfaOtpVerify', { numberOfKeys: 1, lua: VERIFY });
  redis.defineCommand('lfaOtpClaim', { numberOfKeys: 1, lua: CLAIM });
  redis.defineCommand('lfaOtpRelease', { numberOfKeys: 1, lua: RELEASE });
  const scripts = redis as unknown as OtpScripts;
  const keyOf = (key: string) => `${options.prefix}otp:${key}`;
  const recipientOf = (address: string) => `${options.prefix}rcpt:${address}`;
  const spentOf = (id: string) => `${options.prefix}spent:${id}`;
  const claimedOf = (uid: string) => `${options.prefix}claimed:${uid}`;
  // Two keys, one per direction: on a cluster they live in different slots, so no script spans them.
  const heldPhoneKey = (uid: string) => `${options.prefix}held:uid:${uid}`;
  const phoneHolderKey = (phone: string) => `${options.prefix}held:phone:${phone}`;

  return {
    async issue(
      key: string,
      hash: string,
      now: number,
      policy: OtpPolicy,
      to: string = key,
      journey?: string,
    ): Promise<IssueResult> {
      const [status, stored, previous] = await scripts.lfaOtpIssue(
        keyOf(key),
        hash,
        now,
        policy.ttlMs,
        policy.cooldownMs,
        EXPIRED_RETENTION_MS,
        to,
        policy.maxAttempts,
        journey && /^[A-Za-z0-9_-]+$/.test(journey) ? journey : '',
      );
      if (status === 'blocked')
        return {
          status: 'blocked',
          retryAfterMs: Math.max(1, Number(stored)),
          ...(previous ? { journey: previous } : {}),
        };
      return { status: 'issued', record: unpack(stored), previous: previous ? unpack(previous) : null };
    },

    async journeyOf(key: string, now: number): Promise<string | undefined> {
      const packed = await redis.get(keyOf(key));
      const record = packed ? unpack(packed) : undefined;
      return record && now < record.expiresAt ? record.journey : undefined;
    },

    async revert(key: string, hash: string, previous: OtpRecord | null): Promise<boolean> {
      return (await scripts.lfaOtpRevert(keyOf(key), hash, previous ? pack(previous) : '')) === 1;
    },

    async verify(key: string, hash: string, now: number, policy: OtpPolicy): Promise<VerifyResult> {
      const [outcome, journey, to, sentAt] = await scripts.lfaOtpVerify(keyOf(key), hash, now, policy.maxAttempts);
      const carried = journey ? { journey } : {};
      if (outcome === 'ok') return { outcome, to: to ?? '', sentAt: Number(sentAt), ...carried };
      return { outcome: outcome as Exclude<VerifyOutcome, 'ok'>, ...carried };
    },

    async claimRecipient(address: string, token: string, cooldownMs: number): Promise<ClaimResult> {
      const left = await scripts.lfaOtpClaim(recipientOf(address), token, cooldownMs);
      return left === -1 ? { claimed: true } : { claimed: false, retryAfterMs: Math.max(1, left) };
    },

    async releaseRecipient(address: string, token: string) {
      await scripts.lfaOtpRelease(recipientOf(address), token);
    },

    async clearRecipient(address: string) {
      await redis.del(recipientOf(address));
    },

    async spendProof(id: string, untilMs: number) {
      return (await redis.set(spentOf(id), '1', 'PXAT', Math.max(untilMs, Date.now() + 1), 'NX')) === 'OK';
    },

    async unspendProof(id: string) {
      await redis.del(spentOf(id));
    },

    async markAccountClaimed(uid: string, atMs: number, ttlMs: number) {
      await redis.set(claimedOf(uid), String(atMs), 'PX', ttlMs);
    },

    async accountClaimedAt(uid: string) {
      const at = await redis.get(claimedOf(uid));
      return at === null ? null : Number(at);
    },

    async holdPhone(uid: string, phone: string, ttlMs: number) {
      // The blocking direction first: the phone is the account's before the account knows it.
      await redis.set(phoneHolderKey(phone), uid, 'PX', ttlMs);
      await redis.set(heldPhoneKey(uid), phone, 'PX', ttlMs);
    },

    async heldPhoneOf(uid: string) {
      return redis.get(heldPhoneKey(uid));
    },

    async phoneHeldFor(phone: string) {
      return redis.get(phoneHolderKey(phone));
    },

    async releasePhone(uid: string) {
      const phone = await redis.get(heldPhoneKey(uid));
      await redis.del(heldPhoneKey(uid));
      if (phone !== null) await scripts.lfaOtpRelease(phoneHolderKey(phone), uid);
    },

    async ping() {
      return redisAnswers(redis);
    },

    async close() {
      if (options.ownsConnection) redis.disconnect();
    },
  };
}
