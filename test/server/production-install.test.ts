import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';

/*
 * A production install, as a container image makes one: the build, then the dependencies without
 * the development ones (npm prune --omit=dev), then `node dist/src/server.js` with a production
 * configuration. It must start and answer /healthz: nothing a production start reaches may be a
 * devDependency (the sandbox's SMTP server is one, and is loaded only when the sandbox is on).
 * The copy lives outside the checkout: inside it, Node would find a pruned package in the
 * checkout's own node_modules further up. Its packages are hard links where the file system
 * allows (pruning a link deletes nothing of the checkout's), copies otherwise.
 */

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
const SLOW = 240_000;

let dir: string;
let server: ChildProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'production-install-'));
  await run('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], { cwd: ROOT, timeout: SLOW });
  // What an image copies (docs/operations.md, "A production install"): the manifest, the build, the templates.
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, file), join(dir, file));
  cpSync(join(ROOT, 'templates'), join(dir, 'templates'), { recursive: true });
  await run('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')], { timeout: SLOW }).catch(() =>
    run('cp', ['-a', join(ROOT, 'node_modules'), join(dir, 'node_modules')], { timeout: SLOW }),
  );
  await run('npm', ['prune', '--omit=dev', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, timeout: SLOW });
}, SLOW);

afterAll(() => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('has no development dependency left: the prune happened', () => {
  expect(existsSync(join(dir, 'node_modules', 'smtp-server'))).toBe(false);
  expect(existsSync(join(dir, 'node_modules', 'jest'))).toBe(false);
  expect(existsSync(join(dir, 'node_modules', 'koa'))).toBe(true);
});

it('starts node dist/src/server.js with a production configuration and answers /healthz 200', async () => {
  const port = await freePort();
  let stderr = '';
  server = spawn(process.execPath, ['dist/src/server.js'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      SERVER__HOST: '127.0.0.1',
      SERVER__PORT: String(port),
      SECURITY__SECRET: 'p'.repeat(40),
      SANDBOX__ENABLED: 'false',
      // Upstreams nobody answers at: /healthz must not need them.
      IDENTITY__BASE_URL: 'http://127.0.0.1:9/idp',
      SMS__API_URL: 'http://127.0.0.1:9/sms',
      LOG__LEVEL: 'warn',
      OTP__LOG_FILE: '',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => server!.on('exit', (code) => resolve(code)));

  const health = await Promise.race([
    eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
      return res.json();
    }, { timeoutMs: 20_000, intervalMs: 100 }),
    exited.then((code) => {
      throw new Error(`the production server exited (${code}) before answering: ${stderr}`);
    }),
  ]);

  expect(health).toEqual({ success: true, error: null, data: { status: 'up' } });
}, 30_000);
