import { startRedisCluster } from '../../test/support/redis-cluster';
import { adopt } from './reaper';
import type { SoakRedis } from './redis';

/*
 * `--cluster`: the three-master Redis Cluster the cluster tests start (test/support), with
 * `appendonly yes`. Restarting "Redis" is what a deploy does to a cluster: one master at a
 * time, SIGTERM, down for the outage, back on the same port and data. Without replicas its
 * slots go unserved meanwhile, and the whole cluster refuses commands once the others mark it
 * failed (cluster-require-full-coverage): Redis "returns" when every slot is served again.
 */

export async function startSoakCluster(): Promise<SoakRedis> {
  const cluster = await startRedisCluster({ appendonly: true, onSpawn: adopt });
  return {
    config: { cluster: cluster.seeds },
    describe: `a Redis Cluster of 3 masters (appendonly yes) on ${cluster.seeds.join(', ')}`,
    restart: async (downMs, marks) => {
      marks.onDown();
      await cluster.killNode(0, 'SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await cluster.restartNode(0);
      marks.onUp();
    },
    stop: () => cluster.stop(),
  };
}
