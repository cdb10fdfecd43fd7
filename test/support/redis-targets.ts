import Redis from 'ioredis';
import type { RedisConnection } from '../../src/core/redis';
import { clusterClient, startRedisCluster, type RedisCluster } from './redis-cluster';
import { startRedisServer, type RedisServer } from './redis-server';

/*
 * The two kinds of Redis the service runs on, for suites that must hold on both: one server
 * and a three-master cluster, each started once for the file (in beforeAll) and stopped after
 * it. `describe.each(useRedisTargets())('$name', (target) => ...)` runs a suite on each; a
 * multi-key script whose keys are not in one slot fails on the cluster with CROSSSLOT.
 */

export interface RedisTarget {
  name: 'redis' | 'redis cluster';
  /** A plain client to this Redis (offline queue on): what a test uses and looks at keys with. */
  client(): RedisConnection;
  /** The `redis` configuration section that points the service at it. */
  config(): { url: string } | { cluster: string[] };
  /** Stops every server, keeping ports (and cluster state), so `restart` brings them back. */
  kill(): Promise<void>;
  restart(): Promise<void>;
}

export function useRedisTargets(): RedisTarget[] {
  let server: RedisServer;
  let cluster: RedisCluster;
  let single: Redis;
  let clustered: RedisConnection;
  beforeAll(async () => {
    [server, cluster] = await Promise.all([startRedisServer(), startRedisCluster()]);
    single = new Redis(server.url);
    clustered = clusterClient(cluster);
  }, 60_000);
  afterAll(async () => {
    single?.disconnect();
    clustered?.disconnect();
    await Promise.all([server?.stop(), cluster?.stop()]);
  });
  return [
    {
      name: 'redis',
      client: () => single,
      config: () => ({ url: server.url }),
      kill: () => server.kill(),
      restart: () => server.restart(),
    },
    {
      name: 'redis cluster',
      client: () => clustered,
      config: () => ({ cluster: cluster.seeds }),
      kill: () => cluster.kill(),
      restart: () => cluster.restart(),
    },
  ];
}
