import Redis from 'ioredis';
import { loadConfig } from '../../src/core/config/load';
import { createLogger } from '../../src/core/logger';
import { createRedis, redisReady } from '../../src/core/redis';
import { createRedisOtpStore } from '../../src/domain/otp/redis-store';
import { describeOtpStore } from '../domain/otp/store-contract';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * The service's own connection (createRedis): commands written in one event-loop turn leave in
 * one socket write, each still its own command, in order, with its own reply.
 */

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  const connection = createRedis(loadConfig({ env: {}, overrides: { redis: { url: server.url } } }), createLogger('silent'));
  // With no `redis.cluster`, `redis.url` is one server: the single client, whose socket the tests look at.
  if (!(connection instanceof Redis)) throw new Error('expected the single-server client');
  redis = connection;
  await redisReady(redis);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

describeOtpStore('redis, on the service connection', () => createRedisOtpStore(redis, { prefix: `c${Math.random().toString(36).slice(2)}:` }));

describe('createRedis', () => {
  it('writes the commands of one turn together, in order, each answered on its own', async () => {
    const replies = Array.from({ length: 200 }, () => redis.incr('coalesce:count'));
    expect(redis.stream.writableCorked).toBe(1);
    expect(await Promise.all(replies)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(redis.stream.writableCorked).toBe(0);
  });

  it('keeps coalescing on the new socket after Redis comes back', async () => {
    await server.kill();
    await server.restart();
    await redisReady(redis, 10_000);
    const replies = [redis.set('coalesce:back', 'x'), redis.get('coalesce:back')];
    expect(redis.stream.writableCorked).toBe(1);
    expect(await Promise.all(replies)).toEqual(['OK', 'x']);
  });
});
