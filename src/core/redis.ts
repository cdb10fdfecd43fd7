import Redis from 'ioredis';
import type { Config } from './config/schema';
import type { Logger } from './logger';

/*
 * The one Redis connection of an instance (OTP records, rate limits, the ingest queue).
 * Commands fail fast while Redis is unreachable (no offline queue, one retry), so a request
 * answers `store_unavailable` at once instead of hanging; the connection keeps retrying in
 * the background and the service recovers by itself when Redis returns.
 */
export function createRedis(config: Config, log: Logger): Redis {
  const redis = new Redis(config.redis.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 2_000),
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

/** Resolves when the connection is ready (or rejects after `timeoutMs`): start-up and tests. */
export function redisReady(redis: Redis, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
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
