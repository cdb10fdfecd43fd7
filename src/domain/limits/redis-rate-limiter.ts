import type { RedisConnection } from '../../core/redis';
import { storeUnavailable } from '../otp/errors';
import type { RateLimiter, RateRule } from './rate-limiter';

// One round trip, atomic on the server: count the hit and start the window on the first one.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { count, ttl }
`;

// HIT on each key in turn, stopping at the first over its limit. KEYS: one counter per rule;
// ARGV: limit and window (ms) per rule. Answers { rule (1-based, 0 when none refused), ttl }.
const HIT_EACH = `
for i, key in ipairs(KEYS) do
  local limit, window = tonumber(ARGV[2 * i - 1]), ARGV[2 * i]
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('PEXPIRE', key, window) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, window); ttl = tonumber(window) end
  if count > limit then return { i, ttl } end
end
return { 0, 0 }
`;

// The count and what is left of its window, in one round trip; nothing counted.
const PEEK = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return { count, redis.call('PTTL', KEYS[1]) }
`;

interface RateScripts {
  lfaRatePeek(key: string): Promise<[number, number]>;
  lfaRateHit(key: string, windowMs: number): Promise<[number, number]>;
  lfaRateHitEach(...keysThenArgs: Array<string | number>): Promise<[number, number]>;
}

export function createRedisRateLimiter(redis: RedisConnection, prefix: string): RateLimiter {
  redis.defineCommand('lfaRateHit', { numberOfKeys: 1, lua: HIT });
  // No fixed key count: the caller's first argument says how many keys follow.
  redis.defineCommand('lfaRateHitEach', { lua: HIT_EACH });
  redis.defineCommand('lfaRatePeek', { numberOfKeys: 1, lua: PEEK });
  const scripts = redis as unknown as RateScripts;
  // Redis away (an outage, a restarting cluster node) is the store's 503, never a 500.
  const unavailable = (err: unknown): never => {
    throw storeUnavailable(err);
  };
  return {
    async hit(key, limit, windowMs) {
      const [count, ttl] = await scripts.lfaRateHit(`${prefix}rl:${key}`, windowMs).catch(unavailable);
      const allowed = count <= limit;
      return { allowed, remaining: Math.max(0, limit - count), retryAfterMs: allowed ? 0 : ttl };
    },
    async peek(key, limit) {
      const [count, ttl] = await scripts.lfaRatePeek(`${prefix}rl:${key}`).catch(unavailable);
      const allowed = count <= limit;
      return { allowed, remaining: Math.max(0, limit - count), retryAfterMs: allowed ? 0 : Math.max(1, ttl) };
    },
    async hitEach(key, rules: readonly RateRule[]) {
      // A chain's counters share the hash tag of its key, so on a Redis Cluster they are in one slot and one script counts them all.
      const keys = rules.map((rule) => `${prefix}rl:{${key}}:${rule.name}`);
      const args = rules.flatMap((rule) => [rule.limit, rule.windowMs]);
      const [rule, ttl] = await scripts.lfaRateHitEach(keys.length, ...keys, ...args).catch(unavailable);
      // Stryker disable next-line ConditionalExpression: the script answers { 0, 0 } when no rule refused, which the other branch reads the same
      return rule === 0 ? { refused: -1, retryAfterMs: 0 } : { refused: rule - 1, retryAfterMs: ttl };
    },
    async close() {},
  };
}
