import Redis from 'ioredis';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { freePort } from '../../test/support/ports';
import { adopt } from './reaper';

/*
 * The soak's Redis as production runs it: `appendonly yes` (fsync every second) in a data
 * directory of the soak's temp dir. `restart` is what a deploy or a host reboot does: SIGTERM
 * (Redis writes its append-only file out and exits), some seconds down, then the same port and
 * the same directory, so every record, counter and queued ingest is back once it has loaded.
 */

export interface SoakRedis {
  /** What the instances' `redis` configuration section gets (besides `key_prefix`). */
  config: Record<string, unknown>;
  describe: string;
  /** Stops Redis, waits `downMs`, starts it again; `onDown` and `onUp` mark the outage's ends. */
  restart(downMs: number, marks: { onDown(): void; onUp(): void }): Promise<void>;
  stop(): Promise<void>;
}

function assertRedisInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    throw new Error('redis-server is not installed (scripts/test.sh installs it with apt-get)');
}

/** Resolves once Redis answers PING (not LOADING, not refused); throws after `timeoutMs`. */
async function waitForPong(port: number, child: ChildProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with code ${child.exitCode}`);
    const client = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    client.on('error', () => {});
    const pong = await client
      .connect()
      .then(() => client.ping())
      .catch(() => undefined);
    client.disconnect();
    if (pong === 'PONG') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

/** SIGTERM, and SIGKILL if it has not exited after `graceMs`; resolves once it exited. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(force);
}

const appendOnlyArgs = (dir: string) => [
  '--dir',
  dir,
  '--appendonly',
  'yes',
  '--appendfsync',
  'everysec',
  '--save',
  '',
];

export async function startSoakRedis(dir: string): Promise<SoakRedis> {
  assertRedisInstalled();
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const launch = async () => {
    const child = adopt(
      spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...appendOnlyArgs(dir)], {
        stdio: 'ignore',
      }),
    );
    await waitForPong(port, child);
    return child;
  };
  let child = await launch();
  return {
    config: { url: `redis://127.0.0.1:${port}` },
    describe: `one redis-server (appendonly yes) on 127.0.0.1:${port}`,
    restart: async (downMs, marks) => {
      marks.onDown();
      await stopProcess(child);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      child = await launch();
      marks.onUp();
    },
    stop: () => stopProcess(child),
  };
}
