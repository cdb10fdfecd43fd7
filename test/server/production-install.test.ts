import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { JOURNEY_IDS } from '../../machines';
import { copyBuildAssets } from '../../scripts/build-assets';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';

/*
 * A production install, as a container image makes one: the build, then the dependencies without
 * the development ones (npm prune --omit=dev), then `node dist/src/server.js` with a production
 * configuration. It must start and answer /healthz: nothing a production start reaches may be a
 * devDependency (the sandbox's SMTP server is one, and is loaded only when the sandbox is on).
 * With the demo off, as in production, a funnel reader gets /flows with the journeys' diagrams
 * and their figures: the build carries the SVGs (scripts/build-assets.ts), the image no docs/.
 * One server serves every check: a start costs seconds, a request milliseconds.
 * The copy lives outside the checkout: inside it, Node would find a pruned package in the
 * checkout's own node_modules further up. Its packages are hard links where the file system
 * allows (pruning a link deletes nothing of the checkout's), copies otherwise.
 */

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
const SLOW = 240_000;
const READ_KEY = 'production-install-funnel-read-key';

let dir: string;
let server: ChildProcess | undefined;
let base: string | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'production-install-'));
  // `npm run build` into the copy: the checkout's own dist/ is left to the tests that use it.
  await run('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], { cwd: ROOT, timeout: SLOW });
  copyBuildAssets(join(dir, 'dist'));
  // What an image copies (docs/operations.md, "A production install"): the manifest, the build, the templates.
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, file), join(dir, file));
  cpSync(join(ROOT, 'templates'), join(dir, 'templates'), { recursive: true });
  await run('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')], { timeout: SLOW }).catch(() =>
    run('cp', ['-a', join(ROOT, 'node_modules'), join(dir, 'node_modules')], { timeout: SLOW }),
  );
  await run('npm', ['prune', '--omit=dev', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    timeout: SLOW,
  });
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
      FUNNEL__READ_KEY: READ_KEY,
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
    eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(res.status).toBe(200);
        return res.json();
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    ),
    exited.then((code) => {
      throw new Error(`the production server exited (${code}) before answering: ${stderr}`);
    }),
  ]);

  expect(health).toEqual({ success: true, error: null, data: { status: 'up' } });
  base = `http://127.0.0.1:${port}`;
}, 30_000);

describe('the journeys with their figures, demo off', () => {
  const get = (path: string, headers: Record<string, string> = {}) => {
    if (!base) throw new Error('the production server did not start (see the test before)');
    return fetch(`${base}${path}`, { headers });
  };
  const reader = { 'x-funnel-key': READ_KEY };

  it('answers a funnel reader /flows?since=1h, the page with the range and a diagram per journey', async () => {
    const res = await get('/flows?since=1h', reader);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<ul class="ranges">');
    expect(html).not.toMatch(/href="\/demo|href="\/_sandbox/);
    const sources = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
    expect(sources.map((src) => src.split('?')[0])).toEqual(JOURNEY_IDS.map((id) => `/flows/${id}.svg`));
    expect(sources.every((src) => /\?from=\d{13}&to=\d{13}$/.test(src))).toBe(true);
    // The examples the build carries (docs/journeys/examples.json): one recorded person per journey.
    expect(html.match(/<details class="examples">/g)).toHaveLength(JOURNEY_IDS.length);
    expect(html).toContain('<strong>Mario Rossi</strong>');
    expect((await get('/flows/flows.css', reader)).status).toBe(200);
  });

  it('answers a funnel reader each journey’s SVG with its figures drawn on it', async () => {
    const range = `from=${Date.now() - 3_600_000}&to=${Date.now()}`;
    for (const id of JOURNEY_IDS) {
      const res = await get(`/flows/${id}.svg?${range}`, reader);
      const svg = await res.text();
      expect({ id, status: res.status, type: res.headers.get('content-type') }).toEqual({
        id,
        status: 200,
        type: 'image/svg+xml; charset=utf-8',
      });
      expect(svg).toContain('<g class="funnel-figures"');
    }
  });

  it('refuses /flows and the SVGs without the key, as a path that does not exist', async () => {
    for (const [path, headers] of [
      ['/flows?since=1h', {}],
      ['/flows?since=1h', { 'x-funnel-key': 'wrong' }],
      [`/flows/phone-login.svg?from=${Date.now() - 3_600_000}&to=${Date.now()}`, {}],
      ['/flows/phone-login.svg', {}],
    ] as Array<[string, Record<string, string>]>) {
      const res = await get(path, headers);
      const body = (await res.json()) as { data?: { reason?: string } };
      expect({ path, status: res.status, reason: body.data?.reason }).toEqual({
        path,
        status: 404,
        reason: 'unknown_action',
      });
    }
  });
});
