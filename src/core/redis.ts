import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Config } from './config/schema';
import type { Logger } from './logger';

/**
 * The connection the stores share: one server (`redis.url`) or a Redis Cluster
 * (`redis.cluster`). Both speak the same commands; every multi-key script and transaction of
 * the stores keeps its keys in one hash slot, so it runs unchanged on either.
 */
export type RedisConnection = Redis | Cluster;

export const isCluster = (redis: RedisConnection): redis is Cluster => redis instanceof Cluster;

const retryDelayMs = (attempt: number) => Math.min(100 * 2 ** attempt, 2_000);

/*
 * The one Redis connection of an instance (OTP records, rate limits, the ingest queue).
 * Commands fail fast while Redis is unreachable (no offline queue, one retry), so a request
 * answers `store_unavailable` at once instead of hanging; the connection keeps retrying in
 * the background and the service recovers by itself when Redis returns.
 */
export function createRedis(config: Config, log: Logger): RedisConnection {
  if (config.redis.cluster.length > 0) return createCluster(config.redis.cluster, securityOptions(config.redis), log);
  const redis = new Redis(config.redis.url, {
    ...singleServerSecurity(config.redis),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: retryDelayMs,
  });
  coalesceWrites(redis);
  let down = false;
  redis.on('ready', () => {
    if (down) log.info('redis connection restored');
    down = false;
  });
  redis.on('error', (err) => {
    // One line per outage, not one per reconnect attempt; the URL may hold a password.
    if (!down) log.error({ err: { message: err.message } }, 'redis unreachable');
    down = true;
  });
  return redis;
}

type Security = Pick<RedisOptions, 'username' | 'password' | 'tls'>;

/**
 * `redis.username`, `redis.password` and `redis.tls` as connection options; an empty key adds
 * nothing. `tls: {}` verifies the server's certificate against the system CAs and its host name.
 */
function securityOptions(redis: Config['redis']): Security {
  return {
    ...(redis.username ? { username: redis.username } : {}),
    ...(redis.password ? { password: redis.password } : {}),
    ...(redis.tls ? { tls: {} } : {}),
  };
}

/**
 * A single server: credentials written in `redis.url` win (options would override them, so the
 * keys are dropped); a URL without any takes the keys', so the secret can stay out of the URL.
 * TLS is on when either `rediss://` or `redis.tls` says so.
 */
export function singleServerSecurity(redis: Config['redis']): Security {
  const { username, password, ...tls } = securityOptions(redis);
  const url = URL.canParse(redis.url) ? new URL(redis.url) : undefined;
  if (url && (url.username !== '' || url.password !== '')) return tls;
  return { ...(username ? { username } : {}), ...(password ? { password } : {}), ...tls };
}

/** `host:port` or `[v6]:port` as a seed node. */
function seedNode(seed: string): { host: string; port: number } {
  const colon = seed.lastIndexOf(':');
  return { host: seed.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(seed.slice(colon + 1)) };
}

/*
 * The Cluster client's options (see createCluster). AUTH and TLS go to every node connection
 * (`redisOptions`): a cluster's nodes are reached at the addresses it announces, which carry no
 * credentials. With TLS the seeds' host names are not resolved to addresses first (ioredis would,
 * and then check a certificate for the cluster's host name against an IP: AWS ElastiCache's
 * note in ioredis's README); the nodes it announces are already what their certificates name.
 */
function clusterOptions(security: Security): ClusterOptions {
  return {
    enableOfflineQueue: false,
    retryDelayOnClusterDown: 0,
    retryDelayOnFailover: 0,
    slotsRefreshInterval: 2_000,
    clusterRetryStrategy: retryDelayMs,
    ...(security.tls
      ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) }
      : {}),
    redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000, ...security },
  };
}

/*
 * The Cluster client, failing as fast as the single one. With no offline queue a command
 * while the cluster is unreachable is refused at once; with no delayed retry on CLUSTERDOWN
 * or on a closed node connection, a command for the slots of a node that is down is refused
 * at once too (ioredis would otherwise retry it for up to 16 x 100 ms). MOVED and ASK are
 * still followed at once, so a resharding or a failover is transparent. Node connections do
 * not reconnect on their own (ioredis's design: topology comes from the cluster); the slot
 * map is refreshed every couple of seconds, which reconnects to a node that returned, and
 * the whole client reconnects in the background when every node was lost.
 */
function createCluster(seeds: string[], security: Security, log: Logger): Cluster {
  const cluster = new Cluster(seeds.map(seedNode), clusterOptions(security));
  let down = false;
  const unreachable = new Set<string>();
  // Connected now, not on their first command: a node connection still connecting refuses the
  // commands of that moment (no offline queue), so a cold one would refuse a first burst.
  const connectIdle = (redis: Redis) => {
    if (redis.status === 'wait') redis.connect().catch(() => {});
  };
  cluster.on('ready', () => {
    if (down) log.info('redis cluster connection restored');
    down = false;
    for (const redis of cluster.nodes()) connectIdle(redis);
  });
  cluster.on('error', (err: Error) => {
    if (!down) log.error({ err: { message: err.message } }, 'redis cluster unreachable');
    down = true;
  });
  // One line per node outage: a down node is tried again on every refresh and every command.
  cluster.on('node error', (err: Error, node: string) => {
    if (unreachable.has(node)) return;
    unreachable.add(node);
    log.error({ node, err: { message: err.message } }, 'redis cluster node unreachable');
  });
  cluster.on('+node', (redis: Redis) => {
    coalesceWrites(redis);
    // Only once the client is ready. While it (re)connects, its ready check asks one of these
    // nodes, and refuses a node that is connecting: connected here, every node was connecting
    // then, and after a restart of the whole cluster an instance could fail its check every
    // retry for as long as the test watched (12 s). Until then they wait, as ioredis leaves
    // them. A node that is down fails here, and the next slot refresh tries it again.
    if (cluster.status === 'ready') connectIdle(redis);
    const node = `${redis.options.host}:${redis.options.port}`;
    redis.once('ready', () => {
      if (unreachable.delete(node)) log.info({ node }, 'redis cluster node restored');
    });
  });
  return cluster;
}

/**
 * Every command written in one event-loop turn, by all the requests in flight, leaves in one
 * socket write: the first command of a turn corks the socket and the check phase uncorks it.
 * A write is a system call, dearer than the command it carries; the commands stay separate
 * (one script or command each, so atomicity and key slots are untouched) and keep their order.
 * ioredis's own `enableAutoPipelining` does the same with a Pipeline object and a promise per
 * command, which costs more CPU than the writes it saves (measured).
 */
function coalesceWrites(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Redis['stream'] | undefined;
  const uncork = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream;
    if (!stream && corked === undefined && redis.status === 'ready' && socket?.writable) {
      corked = socket;
      socket.cork();
      setImmediate(uncork);
    }
    return send(command, stream);
  };
}

/**
 * Resolves when the connection is ready (or rejects after `timeoutMs`): start-up and tests.
 * A cluster is ready when every slot's master answers, not only when the client is.
 */
export async function redisReady(redis: RedisConnection, timeoutMs = 5_000): Promise<void> {
  if (isCluster(redis)) {
    const deadline = Date.now() + timeoutMs;
    while (!(await redisAnswers(redis).catch(() => false))) {
      if (Date.now() >= deadline) throw new Error('redis cluster not ready');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return;
  }
  if (redis.status === 'ready') return;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error('redis not ready'));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}

/**
 * Whether the store can serve every key now. One server: it answers PING. A cluster: every
 * slot has a master, and every master answers PING, so an instance is not ready while the
 * slots of a lost master have no one to serve them.
 */
export async function redisAnswers(redis: RedisConnection): Promise<boolean> {
  if (!isCluster(redis)) return (await redis.ping()) === 'PONG';
  if (redis.status !== 'ready') return false;
  const owners = new Set<string>();
  for (let slot = 0; slot < 16_384; slot += 1) {
    const owner = redis.slots[slot]?.[0];
    if (owner === undefined) return false;
    owners.add(owner);
  }
  const masters = new Map(redis.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const pongs = await Promise.all([...owners].map((owner) => masters.get(owner)?.ping() ?? Promise.resolve(null)));
  return pongs.every((pong) => pong === 'PONG');
}
