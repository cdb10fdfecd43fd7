import type { RedisConnection } from '../../core/redis';
import { addInto, bucketsFor, DAY_MS, HOUR_MS, HOUR_RETENTION_MS, MINUTE_MS, MINUTE_RETENTION_MS, type FunnelCounts, type FunnelStore } from './store';

/*
 * The funnel's counters on Redis or a Redis Cluster. One batch is one script: both of its
 * buckets (the minute and the hour) get every field added and their lifetime set, in one round
 * trip. The two keys share a hash tag (the day), so the script runs unchanged on a cluster; a
 * day's counters sit on one node, which HINCRBY at one call per instance per flush can afford.
 */
const ADD = `
for i = 1, #ARGV - 2, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[#ARGV - 1])
redis.call('PEXPIRE', KEYS[2], ARGV[#ARGV])
return 1
`;

type AddScript = (minuteKey: string, hourKey: string, ...args: Array<string | number>) => Promise<number>;

export function createRedisFunnelStore(redis: RedisConnection, prefix: string): FunnelStore {
  redis.defineCommand('lfaFunnelAdd', { numberOfKeys: 2, lua: ADD });
  const addScript = (redis as unknown as { lfaFunnelAdd: AddScript }).lfaFunnelAdd.bind(redis);
  const day = (at: number) => Math.floor(at / DAY_MS);
  const minuteKey = (at: number) => `${prefix}funnel:{${day(at)}}:m${at}`;
  const hourKey = (at: number) => `${prefix}funnel:{${day(at)}}:h${at}`;
  return {
    async add(counts, atMs) {
      const args: Array<string | number> = [];
      for (const [field, n] of Object.entries(counts)) args.push(field, n);
      if (args.length === 0) return;
      const minute = Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
      const hour = Math.floor(atMs / HOUR_MS) * HOUR_MS;
      // Lifetimes from the bucket's end, so a bucket lives its whole retention after its last count.
      await addScript(minuteKey(minute), hourKey(hour), ...args, MINUTE_RETENTION_MS + MINUTE_MS, HOUR_RETENTION_MS + HOUR_MS);
    },
    async read(fromMs, toMs, nowMs) {
      const { starts, ...range } = bucketsFor(fromMs, toMs, nowMs);
      const key = range.resolution === 'minute' ? minuteKey : hourKey;
      // Buckets of different days live on different nodes of a cluster: one HGETALL each, in parallel (reads are rare: operators).
      const buckets = await Promise.all(starts.map((at) => redis.hgetall(key(at))));
      const counts: FunnelCounts = {};
      for (const bucket of buckets) addInto(counts, Object.fromEntries(Object.entries(bucket).map(([f, n]) => [f, Number(n)])));
      return { counts, range };
    },
  };
}
