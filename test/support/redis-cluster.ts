import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { freePort } from './ports';

/*
 * A real Redis Cluster of three masters on loopback, started by the test file that needs it
 * (one per file, in beforeAll: creating one takes a second or two). Each node keeps its
 * cluster state in a temp dir, so `restart` brings the same nodes back on the same ports and
 * the cluster heals by itself. A missing redis-server or redis-cli fails the test loudly
 * (scripts/test.sh installs them with apt-get); it is never skipped.
 */

export interface RedisCluster {
  /** `host:port` of each master, as `redis.cluster` takes them. */
  seeds: string[];
  /** Stops every node and removes the temp dir. */
  stop(): Promise<void>;
  /** Stops every node, keeping its ports and state, so `restart` brings the cluster back. */
  kill(): Promise<void>;
  /** Starts the killed nodes again and waits until the cluster serves every slot. */
  restart(): Promise<void>;
  /** Stops one master (0..2), keeping its port and state: its slots go unserved. SIGTERM: as a deploy stops it (with appendonly, it writes its file out first). */
  killNode(index: number, signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts that master again and waits until the cluster serves every slot. */
  restartNode(index: number): Promise<void>;
}

export interface RedisClusterOptions {
  /** `appendonly yes`, as production runs it (the soak); tests need no persistence. */
  appendonly?: boolean;
  /** Sees each node process as it starts (the soak kills them all when it ends, however it ends). */
  onSpawn?(child: ChildProcess): ChildProcess;
}

const NODES = 3;

function assertInstalled(): void {
  for (const command of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(command, ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      throw new Error(`${command} is not installed: run the README test command (\`npm test\`), which installs it with apt-get`);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function cli(port: number, ...args: string[]): { ok: boolean; out: string } {
  const run = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
  return { ok: run.status === 0, out: `${run.stdout ?? ''}${run.stderr ?? ''}` };
}

async function waitFor(what: string, check: () => boolean, children: ChildProcess[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = children.find((child) => child.exitCode !== null);
    if (dead) throw new Error(`redis-server exited with code ${dead.exitCode} while waiting for ${what}`);
    if (check()) return;
    await sleep(100);
  }
  throw new Error(`redis cluster: no ${what} within ${timeoutMs / 1000} s`);
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  assertInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const ports: number[] = [];
  const busPorts: number[] = [];
  // Six distinct ports: the default bus port (port + 10000) may be taken or out of range.
  const taken = new Set<number>();
  while (taken.size < NODES * 2) taken.add(await freePort());
  const free = [...taken];
  for (let i = 0; i < NODES; i++) {
    ports.push(free[i]!);
    busPorts.push(free[NODES + i]!);
  }
  let children: ChildProcess[] = [];

  const spawnNode = (port: number, i: number) => {
    const child = spawn(
      'redis-server',
      [
        '--port', String(port),
        '--cluster-port', String(busPorts[i]),
        '--bind', '127.0.0.1',
        '--cluster-enabled', 'yes',
        '--cluster-config-file', `nodes-${port}.conf`,
        // Nodes of a test see each other lost (and back) within a second, not the default 15.
        '--cluster-node-timeout', '1000',
        '--dir', dir,
        '--save', '',
        '--appendonly', options.appendonly ? 'yes' : 'no',
        // One append-only directory per node: they share `dir`.
        '--appenddirname', `appendonly-${port}`,
      ],
      { stdio: 'ignore' },
    );
    return options.onSpawn ? options.onSpawn(child) : child;
  };
  const launch = async () => {
    children = ports.map(spawnNode);
    await waitFor('node answering PING', () => ports.every((port) => cli(port, 'ping').out.includes('PONG')), children);
  };
  const clusterOk = () => ports.every((port) => cli(port, 'cluster', 'info').out.includes('cluster_state:ok'));
  const killChild = (child: ChildProcess, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL') =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  const kill = async () => {
    await Promise.all(children.map((child) => killChild(child)));
  };

  try {
    await launch();
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    await waitFor('cluster_state:ok', clusterOk, children);
  } catch (err) {
    await kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    seeds: ports.map((port) => `127.0.0.1:${port}`),
    kill,
    async restart() {
      await launch();
      await waitFor('cluster_state:ok after a restart', clusterOk, children);
    },
    killNode: (index, signal) => killChild(children[index]!, signal),
    async restartNode(index) {
      children[index] = spawnNode(ports[index]!, index);
      await waitFor('cluster_state:ok after a node restart', clusterOk, children);
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A plain ioredis Cluster client (no fail-fast options): what a test uses to look at the keys. */
export function clusterClient(cluster: RedisCluster): Cluster {
  return new Cluster(
    cluster.seeds.map((seed) => ({ host: '127.0.0.1', port: Number(seed.split(':')[1]) })),
  );
}
