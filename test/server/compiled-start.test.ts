import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually';
import { connectOutcome, freePort } from '../support/ports';

/*
 * `npm start` as a user or a process manager runs it: npm, then the compiled server under node
 * (scripts/start.sh execs it), on the sandbox upstreams since nothing else is configured. A
 * signal sent to npm reaches the server, which shuts down gracefully: its "stopped" line with
 * exit code 0, npm's exit 0, the port closed, and no node process left behind. dist/ is built
 * once, here, so `npm start` finds it fresh and starts at once (a source edited meanwhile makes
 * it build again first, which the waits allow for).
 */

const ROOT = join(__dirname, '..', '..');
const BUILD_TIMEOUT = 180_000;

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: ROOT, timeout: BUILD_TIMEOUT });
}, BUILD_TIMEOUT);

interface Started {
  npm: ChildProcess;
  port: number;
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function npmStart(): Promise<Started> {
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      SANDBOX__ENABLED: 'true',
      SERVER__HOST: '127.0.0.1',
      SERVER__PORT: String(port),
      SECURITY__SECRET: 'compiled-start-secret-compiled-start',
      OTP__LOG_FILE: '',
      LOG__LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(npm);
  const lines: Array<Record<string, unknown>> = [];
  let buffer = '';
  npm.stdout!.on('data', (chunk) => {
    buffer += String(chunk);
    const complete = buffer.split('\n');
    buffer = complete.pop()!;
    for (const text of complete) {
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        // npm's own lines are not JSON.
      }
    }
  });
  npm.stderr!.resume();
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  return { npm, port, lines, exited };
}

/** The processes whose parent is `pid` (Linux /proc). */
const childrenOf = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
const commandOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function healthy(port: number): Promise<void> {
  await eventually(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
    },
    { timeoutMs: 90_000, intervalMs: 200 },
  );
}

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'runs the compiled server under node, and a %s sent to npm stops it gracefully with nothing left running',
    async (signal) => {
      const started = await npmStart();
      await healthy(started.port);

      // npm's one child is the server itself: node running the compiled JavaScript, no shell or tsx between.
      const [server, ...others] = childrenOf(started.npm.pid!);
      expect(others).toEqual([]);
      expect(commandOf(server!).slice(-1)).toEqual(['dist/src/server.js']);
      expect(commandOf(server!)[0]).toMatch(/(^|\/)node$/);
      // The sandbox (asked for by name: the log level and the OTP log are configuration) answers: a code goes out.
      const login = await fetch(`http://127.0.0.1:${started.port}/FeLogin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"identifier":"+393331234567"}',
      });
      expect(await login.json()).toMatchObject({ success: true, data: { next_step: 14 } });

      started.npm.kill(signal);
      expect(await started.exited).toBe(0);
      expect(started.lines.find((l) => String(l.msg).startsWith('shutting down'))).toMatchObject({ signal });
      expect(started.lines.find((l) => l.msg === 'stopped')).toMatchObject({ exit_code: 0 });
      expect(await connectOutcome(started.port)).toBe('ECONNREFUSED');
      await eventually(() => expect(alive(server!)).toBe(false), { timeoutMs: 5_000, intervalMs: 50 });
    },
    120_000,
  );
});
