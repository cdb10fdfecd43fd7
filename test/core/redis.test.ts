import Redis from 'ioredis';
import { loadConfig } from '../../src/core/config/load';
import { createLogger } from '../../src/core/logger';
import { createRedis, isCluster, redisAnswers, redisReady, type RedisConnection } from '../../src/core/redis';
import { createRedisOtpStore } from '../../src/domain/otp/redis-store';
import { describeOtpStore } from '../domain/otp/store-contract';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * The service's own connection (createRedis): commands written in one event-loop turn leave in
 * one socket write, each still its own command, in order, with its own reply.
 */

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  const connection = createRedis(
    loadConfig({ env: { NODE_ENV: 'test' }, overrides: { redis: { url: server.url } } }),
    createLogger('silent'),
  );
  // With no `redis.cluster`, `redis.url` is one server: the single client, whose socket the tests look at.
  if (!(connection instanceof Redis)) throw new Error('expected the single-server client');
  redis = connection;
  await redisReady(redis);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

describeOtpStore('redis, on the service connection', () =>
  createRedisOtpStore(redis, { prefix: `c${Math.random().toString(36).slice(2)}:` }),
);

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

/*
 * The service's connection to a Redis Cluster (`redis.cluster`): the same stores on it, writes
 * coalesced per node socket, multi-key scripts held to one slot by the cluster itself, and a
 * lost master refusing at once the keys of its slots while the others keep serving.
 */
describe('createRedis with redis.cluster', () => {
  let cluster: RedisCluster;
  let connection: RedisConnection;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    connection = createRedis(
      loadConfig({ env: { NODE_ENV: 'test', REDIS__CLUSTER: cluster.seeds.join(',') } }),
      createLogger('silent'),
    );
    await redisReady(connection);
  }, 60_000);
  afterAll(async () => {
    connection?.disconnect();
    await cluster?.stop();
  });
  /** The index in `cluster.seeds` of the master that serves `key`. */
  const masterOf = async (key: string) => {
    const slot = (await connection.cluster('KEYSLOT', key)) as number;
    if (!isCluster(connection)) throw new Error('expected the cluster client');
    return cluster.seeds.indexOf(connection.slots[slot]![0]!);
  };

  describeOtpStore('redis cluster, on the service connection', () =>
    createRedisOtpStore(connection, { prefix: `c${Math.random().toString(36).slice(2)}:` }),
  );

  it('is the Cluster client, and writes the commands of one turn together on each node, each answered on its own', async () => {
    if (!isCluster(connection)) throw new Error('expected the cluster client');
    const keys = Array.from({ length: 60 }, (_, i) => `coalesce:${i}`);
    const replies = keys.map((key) => connection.incr(key));
    const masters = connection.nodes('master');
    expect(masters).toHaveLength(3);
    expect(masters.map((node) => node.stream.writableCorked)).toEqual([1, 1, 1]);
    expect(await Promise.all(replies)).toEqual(keys.map(() => 1));
    expect(masters.map((node) => node.stream.writableCorked)).toEqual([0, 0, 0]);
  });

  it('runs a multi-key script only when its keys share a hash slot: the cluster refuses the others with CROSSSLOT', async () => {
    const script = "redis.call('SET', KEYS[1], '1'); redis.call('SET', KEYS[2], '2'); return 1";
    const [a, b] = ['crossslot:a', 'crossslot:b'];
    expect(await masterOf(a)).not.toBe(await masterOf(b));
    await expect(connection.eval(script, 2, a, b)).rejects.toThrow(/CROSSSLOT/);
    expect(await connection.eval(script, 2, '{tagged}:a', '{tagged}:b')).toBe(1);
  });

  it('refuses at once the keys of a lost master, serves the others, is not ready, and recovers when the master returns', async () => {
    const store = createRedisOtpStore(connection, { prefix: 'outage:' });
    const keys = Array.from({ length: 30 }, (_, i) => `outage:otp:k${i}`);
    const owners = await Promise.all(keys.map(masterOf));
    const lostKey = keys[owners.indexOf(0)]!.slice('outage:otp:'.length);
    const liveKey = keys[owners.findIndex((owner) => owner !== 0)]!.slice('outage:otp:'.length);
    const policy = { ttlMs: 300_000, cooldownMs: 60_000, maxAttempts: 5 };
    const hash = 'ab'.repeat(32);

    await cluster.killNode(0);
    try {
      await expect(store.issue(lostKey, hash, Date.now(), policy)).rejects.toThrow();
      expect(await store.issue(liveKey, hash, Date.now(), policy)).toMatchObject({ status: 'issued' });
      expect(await redisAnswers(connection).catch(() => false)).toBe(false);
    } finally {
      await cluster.restartNode(0);
    }
    await redisReady(connection, 15_000);
    expect(await redisAnswers(connection)).toBe(true);
    expect(await store.issue(lostKey, hash, Date.now(), policy)).toMatchObject({ status: 'issued' });
  });

  it('comes back after the whole cluster restarts, every time: no node connects while the client reconnects, every node once it is ready', async () => {
    if (!isCluster(connection)) throw new Error('expected the cluster client');
    const client = connection;
    // Seen after the service's own listener: a node it connected while the client was not ready
    // made the client's ready check fail, retry by retry (once for 12 s on this machine).
    const joined: string[] = [];
    const onNode = (node: Redis) => joined.push(`${connection.status}/${node.status}`);
    // Once ready, every node is connected at once, before any command (a cold one would refuse a first burst).
    const idleWhenReady: string[] = [];
    const onReady = () =>
      idleWhenReady.push(
        ...client
          .nodes()
          .filter((node) => node.status === 'wait')
          .map((node) => `${node.options.port}`),
      );
    connection.on('+node', onNode);
    connection.on('ready', onReady);
    try {
      for (let round = 0; round < 3; round++) {
        await cluster.kill();
        await cluster.restart();
        // About a second after the nodes serve again (the client's retry delay); 6 s is far beyond it.
        await redisReady(connection, 6_000);
        expect(await connection.set(`restart:${round}`, 'ok')).toBe('OK');
      }
    } finally {
      connection.off('+node', onNode);
      connection.off('ready', onReady);
    }
    expect(idleWhenReady).toEqual([]);
    expect(joined.length).toBeGreaterThan(0);
    expect(joined.filter((seen) => !seen.startsWith('ready/') && !seen.endsWith('/wait'))).toEqual([]);
  }, 45_000);
});
