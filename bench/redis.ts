import { spawn, spawnSync } from 'node:child_process';
import { connectOutcome, freePort } from '../test/support/ports';

/*
 * A throw-away redis-server on a free loopback port for the Redis cases, when the binary is
 * installed (test/support/redis-server.ts does the same for tests, where a missing binary is
 * an error; here the Redis cases are reported as skipped instead). No persistence.
 */

export interface BenchRedis {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

export function redisInstalled(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return !probe.error && probe.status === 0;
}

const reachable = async (port: number) => (await connectOutcome(port)) === 'connected';

/** `cpus`: a `taskset -c` list to pin the server to. */
export async function startRedis(cpus?: string): Promise<BenchRedis> {
  const port = await freePort();
  const command = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  if (cpus) command.unshift('taskset', '-c', cpus);
  const child = spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await reachable(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('redis-server did not start within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
