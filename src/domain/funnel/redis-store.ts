import type { RedisConnection } from '../../core/redis';
import {
  addInto,
  bucketStarts,
  DAY_MS,
  fieldsOf,
  HOUR_MS,
  HOUR_RETENTION_MS,
  journeyUntil,
  MINUTE_MS,
  MINUTE_RETENTION_MS,
  type FunnelCounts,
  type FunnelEntry,
  type FunnelStore,
  type FunnelStoreOptions,
} from './store';

/*
 * The funnel's counts on Redis or a Redis Cluster. One entry (one request) is one script: the
 * journey's set of what it was counted for (SADD says whether a `once` count is new), then its
 * minute and hour buckets, with their lifetimes, in one atomic step (answering the fields it added), so two instances serving
 * one journey never count it twice. The three keys share a hash tag (the day the journey
 * started), so the script runs unchanged on a cluster. The entries of a flush are sent together
 * (one write); the answer never waits for them (src/domain/funnel/tally.ts). A journey's set
 * lives as long as its proofs and codes can still be presented (journeyUntil), no longer.
 *
 * The journey's current count (where it waits, until when) is a fourth key, `rank field`: a new
 * one of at least its rank takes the old one back from the buckets (HINCRBY -1) and adds itself.
 *
 * ARGV: minute ttl, hour ttl, journey ttl ('' without a journey), current field ('' for none),
 * its rank, then per once-count: field, repeat ('' for none), repeat-once ('' for none), n,
 * then-fields...; then '|', then
 * the always-fields.
 */
const ADD = `
local fields = {}
local moved = false
if ARGV[3] ~= '' and ARGV[4] ~= '' then
  local prev = redis.call('GET', KEYS[4])
  local rank, field = nil, nil
  if prev then
    local sep = string.find(prev, ' ', 1, true)
    rank, field = tonumber(string.sub(prev, 1, sep - 1)), string.sub(prev, sep + 1)
  end
  if not prev or tonumber(ARGV[5]) >= rank then
    if field ~= ARGV[4] then
      if field then
        redis.call('HINCRBY', KEYS[1], field, -1)
        redis.call('HINCRBY', KEYS[2], field, -1)
      end
      redis.call('HINCRBY', KEYS[1], ARGV[4], 1)
      redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
      moved = true
    end
    redis.call('SET', KEYS[4], ARGV[5] .. ' ' .. ARGV[4], 'PX', ARGV[3])
  end
end
local i = 6
while ARGV[i] ~= '|' do
  local field, rep, repOnce, n = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  if ARGV[3] ~= '' and redis.call('SADD', KEYS[3], field) == 1 then
    fields[#fields + 1] = field
    for j = 1, n do fields[#fields + 1] = ARGV[i + 3 + j] end
  else
    if rep ~= '' then fields[#fields + 1] = rep end
    if repOnce ~= '' and ARGV[3] ~= '' and redis.call('SADD', KEYS[3], repOnce) == 1 then fields[#fields + 1] = repOnce end
  end
  i = i + 4 + n
end
for j = i + 1, #ARGV do fields[#fields + 1] = ARGV[j] end
if ARGV[3] ~= '' then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
if #fields == 0 and not moved then return fields end
for _, field in ipairs(fields) do
  redis.call('HINCRBY', KEYS[1], field, 1)
  redis.call('HINCRBY', KEYS[2], field, 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return fields
`;

type AddScript = (
  minuteKey: string,
  hourKey: string,
  journeyKey: string,
  currentKey: string,
  ...args: Array<string | number>
) => Promise<string[]>;

export function createRedisFunnelStore(
  redis: RedisConnection,
  prefix: string,
  options: FunnelStoreOptions = { idleMs: 15 * 60_000 },
): FunnelStore {
  redis.defineCommand('lfaFunnelJourney', { numberOfKeys: 4, lua: ADD });
  const addScript = (redis as unknown as { lfaFunnelJourney: AddScript }).lfaFunnelJourney.bind(redis);
  const day = (at: number) => Math.floor(at / DAY_MS);
  // `pm`/`ph`: the buckets of people; the request counts of before (`m`/`h`) are not read, and age out.
  const minuteKey = (at: number) => `${prefix}funnel:{${day(at)}}:pm${at}`;
  const hourKey = (at: number) => `${prefix}funnel:{${day(at)}}:ph${at}`;
  const journeyKey = (at: number, id: string) => `${prefix}funnel:{${day(at)}}:j${id}`;
  const currentKey = (at: number, id: string) => `${prefix}funnel:{${day(at)}}:w${id}`;
  const read = async (key: (at: number) => string, starts: number[]) => {
    // Buckets of different days live on different nodes of a cluster: one HGETALL each, in parallel (reads are rare: operators).
    const buckets = await Promise.all(starts.map((at) => redis.hgetall(key(at))));
    const counts: FunnelCounts = {};
    for (const bucket of buckets)
      addInto(counts, Object.fromEntries(Object.entries(bucket).map(([f, n]) => [f, Number(n)])));
    return counts;
  };
  const write = (entry: FunnelEntry, nowMs: number) => {
    const minute = Math.floor(entry.at / MINUTE_MS) * MINUTE_MS;
    const hour = Math.floor(entry.at / HOUR_MS) * HOUR_MS;
    const args: Array<string | number> = [MINUTE_RETENTION_MS + MINUTE_MS, HOUR_RETENTION_MS + HOUR_MS];
    // The journey's set lives as long as what it carries can still be presented, and at least a second.
    args.push(entry.journey === undefined ? '' : Math.max(1000, journeyUntil(entry.at, nowMs, options.idleMs) - nowMs));
    args.push(entry.current?.field ?? '', entry.current?.rank ?? 0);
    for (const once of entry.once)
      args.push(once.field, once.repeat ?? '', once.repeatOnce ?? '', once.then?.length ?? 0, ...(once.then ?? []));
    args.push('|', ...entry.always);
    if (entry.journey === undefined && fieldsOf(entry, () => false).length === 0) return Promise.resolve([]);
    return addScript(
      minuteKey(minute),
      hourKey(hour),
      journeyKey(minute, entry.journey ?? '-'),
      currentKey(minute, entry.journey ?? '-'),
      ...args,
    );
  };
  return {
    add: (entries, nowMs) => Promise.all(entries.map((entry) => write(entry, nowMs))),
    async read(range, nowMs) {
      return {
        counts: await read(range.resolution === 'minute' ? minuteKey : hourKey, bucketStarts(range)),
        range,
        at: nowMs,
      };
    },
  };
}
