import Redis from 'ioredis';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connectOutcome, freePort } from './ports';

/*
 * A real redis-server on a free loopback port, started by the test that needs it. A missing
 * binary fails the test loudly (scripts/test.sh installs it with apt-get); it is never skipped.
 */

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Stops the server without forgetting its port, so `restart` brings it back at the same URL. */
  kill(): Promise<void>;
  restart(): Promise<void>;
}

function assertInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'redis-server is not installed: run the README test command (`npm test`), which installs it with apt-get',
    );
  }
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    if ((await connectOutcome(port)) === 'connected') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start within 10 s');
}

export async function startRedisServer(): Promise<RedisServer> {
  assertInstalled();
  const port = await freePort();
  let child: ChildProcess;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await waitForPort(port, child);
  };
  const kill = () =>
    new Promise<void>((resolve) => {
      // Killed by a signal, a child keeps exitCode null: its signalCode says it is gone too.
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  await launch();
  return { url: `redis://127.0.0.1:${port}`, port, stop: kill, kill, restart: launch };
}

/** A redis-server and one client connected to it, for the file or describe block that calls it. */
export function useRedis(): { redis(): Redis; server(): RedisServer } {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  return { redis: () => redis, server: () => server };
}
