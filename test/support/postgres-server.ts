import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectOutcome, freePort } from './ports';

/*
 * A real PostgreSQL server on a free loopback port, in a fresh data folder, started by the test
 * that needs it from Debian's `postgresql` package (its binaries live under
 * /usr/lib/postgresql/<major>/bin, off the PATH). A missing package fails the test loudly
 * (scripts/test.sh installs it); it is never skipped. PostgreSQL refuses to run as root: as root
 * the server runs as the package's `postgres` user.
 */

export interface PostgresServer {
  url: string;
  /** Stops the server and keeps its data, so `start` brings the same database back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data folder. */
  destroy(): Promise<void>;
}

function binaries(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const major = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (!major)
    throw new Error(
      "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run the README test command (`npm test`), which installs Debian's postgresql with apt-get",
    );
  return join(root, major, 'bin');
}

/** The uid and gid to run as: the `postgres` user when we are root (PostgreSQL refuses root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0)
    throw new Error('running as root, and no `postgres` user to run PostgreSQL as');
  return { uid, gid };
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = binaries();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'lfa-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'lfa', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    { encoding: 'utf8', ...(user ?? {}) },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'full_page_writes=off'],
      { stdio: 'ignore', ...(user ?? {}) },
    );
    const deadline = Date.now() + 20_000;
    const ready = () =>
      spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'lfa'], { encoding: 'utf8' })
        .status === 0;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`postgres exited with code ${child.exitCode}`);
      if ((await connectOutcome(port)) === 'connected' && ready()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('postgres did not start within 20 s');
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return resolve();
      running.once('exit', () => resolve());
      // SIGINT: the fast shutdown, which writes what is committed.
      running.kill('SIGINT');
    });
  await start();
  return {
    url: `postgres://lfa@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
