import type { RedisConnection } from '../../core/redis';
import { storeUnavailable } from '../otp/errors';
import type { RateLimiter } from './rate-limiter';

// One round trip, atomic on the server: count the hit and start the window on the first one.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { count, ttl }
`;

export function createRedisRateLimiter(redis: RedisConnection, prefix: string): RateLimiter {
  redis.defineCommand('lfaRateHit', { numberOfKeys: 1, lua: HIT });
  const hit = (redis as unknown as { lfaRateHit(key: string, windowMs: number): Promise<[number, number]> }).lfaRateHit.bind(redis);
  return {
    async hit(key, limit, windowMs) {
      // Redis away (an outage, a restarting cluster node) is the store's 503, never a 500.
      const [count, ttl] = await hit(`${prefix}rl:${key}`, windowMs).catch((err: unknown) => {
        throw storeUnavailable(err);
      });
      const allowed = count <= limit;
      return { allowed, remaining: Math.max(0, limit - count), retryAfterMs: allowed ? 0 : ttl };
    },
    async close() {},
  };
}
