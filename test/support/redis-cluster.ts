import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  /** `host:port` of each master, as `redis.cluster` takes them (`localhost:port` with `tls`). */
  seeds: string[];
  /** With `tls`: the PEM of the throwaway certificate authority that signed the nodes' certificate. */
  ca?: string;
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
  /** `--requirepass` and `--masterauth`: every client, and every node of another, must AUTH. */
  password?: string;
  /**
   * TLS only, clients and cluster bus, as managed cluster-mode Redis: a self-signed certificate
   * made with openssl for the host name `localhost` only (no IP), and the nodes announce
   * themselves by that host name, as ElastiCache's do.
   */
  tls?: boolean;
}

const NODES = 3;

function assertInstalled(): void {
  for (const command of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(command, ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      throw new Error(
        `${command} is not installed: run the README test command (\`npm test\`), which installs it with apt-get`,
      );
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A throwaway certificate authority and a certificate for `localhost` it signed, in `dir`. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const files = {
    ca: join(dir, 'ca.pem'),
    caKey: join(dir, 'ca-key.pem'),
    cert: join(dir, 'cert.pem'),
    key: join(dir, 'key.pem'),
    csr: join(dir, 'cert.csr'),
    ext: join(dir, 'san.ext'),
  };
  const run = (...args: string[]) => {
    const done = spawnSync('openssl', args, { encoding: 'utf8', timeout: 30_000 });
    if (done.error || done.status !== 0)
      throw new Error(`openssl ${args[0]} failed (is openssl installed?): ${done.error?.message ?? done.stderr}`);
  };
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test redis CA',
    '-keyout',
    files.caKey,
    '-out',
    files.ca,
  );
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', files.key, '-out', files.csr);
  writeFileSync(files.ext, 'subjectAltName=DNS:localhost\n');
  run(
    'x509',
    '-req',
    '-in',
    files.csr,
    '-CA',
    files.ca,
    '-CAkey',
    files.caKey,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    files.ext,
    '-out',
    files.cert,
  );
  return { ca: files.ca, cert: files.cert, key: files.key };
}

async function waitFor(
  what: string,
  check: () => boolean,
  children: ChildProcess[],
  timeoutMs = 20_000,
): Promise<void> {
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
  let certificates: ReturnType<typeof makeCertificates> | undefined;
  try {
    certificates = options.tls ? makeCertificates(dir) : undefined;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const auth = options.password ? ['--requirepass', options.password, '--masterauth', options.password] : [];
  // The node's port serves TLS only (`--port 0`), its cluster bus too.
  const tls = (port: number) =>
    certificates
      ? [
          '--tls-port',
          String(port),
          '--port',
          '0',
          '--tls-cluster',
          'yes',
          '--tls-replication',
          'yes',
          '--tls-auth-clients',
          'no',
          '--tls-cert-file',
          certificates.cert,
          '--tls-key-file',
          certificates.key,
          '--tls-ca-cert-file',
          certificates.ca,
          '--cluster-announce-hostname',
          'localhost',
          '--cluster-preferred-endpoint-type',
          'hostname',
        ]
      : [];
  // redis-cli speaks as the service will: AUTH, TLS trusting the test CA (`--no-auth-warning`: the password is a test's).
  const cliOptions = [
    ...(options.password ? ['-a', options.password, '--no-auth-warning'] : []),
    ...(certificates ? ['--tls', '--cacert', certificates.ca, '--sni', 'localhost'] : []),
  ];
  const cli = (port: number, ...args: string[]): { ok: boolean; out: string } => {
    const run = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...cliOptions, ...args], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    return { ok: run.status === 0, out: `${run.stdout ?? ''}${run.stderr ?? ''}` };
  };

  const spawnNode = (port: number, i: number) => {
    const child = spawn(
      'redis-server',
      [
        ...(certificates ? [] : ['--port', String(port)]),
        '--cluster-port',
        String(busPorts[i]),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        // Nodes of a test see each other lost (and back) within a second, not the default 15.
        '--cluster-node-timeout',
        '1000',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        options.appendonly ? 'yes' : 'no',
        // One append-only directory per node: they share `dir`.
        '--appenddirname',
        `appendonly-${port}`,
        ...auth,
        ...tls(port),
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
      [
        ...cliOptions,
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
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
    seeds: ports.map((port) => `${certificates ? 'localhost' : '127.0.0.1'}:${port}`),
    ...(certificates ? { ca: readFileSync(certificates.ca, 'utf8') } : {}),
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
  return new Cluster(cluster.seeds.map((seed) => ({ host: '127.0.0.1', port: Number(seed.split(':')[1]) })));
}
