import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * The typed client as a frontend project gets it: packed with `npm pack` (its prepack builds
 * it), installed from the tarball into a throwaway CommonJS project and a throwaway ES module
 * project, and called from each against the service running on the sandbox. Its types are
 * checked from both sides too: `next_step` is the union of the contract's steps.
 */

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const CLIENT = join(ROOT, 'client');
const silent = pino({ level: 'silent' });
// The copy's prepack runs tsc, installed at the root of the repository.
const env = {
  ...process.env,
  PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`,
  npm_config_update_notifier: 'false',
};
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env, timeout: 120_000 });

/** Node and tsc run asynchronously: the service answers them from this very process. */
const node = (file: string, cwd: string, baseUrl: string) =>
  run(process.execPath, [file, baseUrl], { cwd, timeout: 30_000 });
/** tsc's complaints about a consumer ('' when it type-checks). */
const typeErrors = (cwd: string) =>
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', cwd], { cwd, timeout: 60_000 }).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string; message: string }) => err.stdout || err.message,
  );

/** A consumer's type check: the answer's step is one of the contract's, and a made-up one is refused. */
const TYPES = `
import { createClient, type DataOf, type Step } from '@login-frontend/client';
const step: Step = 14;
const registered: Step = '24b';
// @ts-expect-error 99 is no step of the contract
const unknown: Step = 99;
export async function first(baseUrl: string): Promise<Step | undefined> {
  const answer = await createClient({ baseUrl }).FeLogin({ identifier: 'mario.rossi@example.com' });
  const next: DataOf<'FeLogin'>['next_step'] | undefined = answer.success ? answer.data.next_step : undefined;
  return next;
}
export const steps = [step, registered, unknown];
`;
const TSCONFIG = JSON.stringify({
  compilerOptions: {
    module: 'node16',
    moduleResolution: 'node16',
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: [],
  },
  include: ['check.ts'],
});

describe('the packed client, installed into CommonJS and ES module projects', () => {
  let service: Service;
  let dir: string;
  let tarball: string;

  beforeAll(async () => {
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    dir = mkdtempSync(join(tmpdir(), 'packed-client-'));
    // Packed from a copy: its prepack empties dist/, which the demo tests serve from the checkout.
    const copy = join(dir, 'client');
    mkdirSync(copy);
    for (const name of readdirSync(CLIENT).filter((n) => n !== 'dist' && n !== 'node_modules' && !n.endsWith('.tgz'))) {
      cpSync(join(CLIENT, name), join(copy, name), { recursive: true });
    }
    const { stdout } = await npm(['pack', '--silent', '--pack-destination', dir], copy);
    tarball = join(dir, stdout.trim().split('\n').at(-1)!);
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function project(name: string, type: 'commonjs' | 'module'): Promise<{ cwd: string; warnings: string }> {
    const cwd = join(dir, name);
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type }));
    // No network: the client has no dependency.
    const { stderr } = await npm(['install', tarball, '--offline', '--no-audit', '--no-fund'], cwd);
    writeFileSync(join(cwd, 'tsconfig.json'), TSCONFIG);
    writeFileSync(join(cwd, 'check.ts'), TYPES);
    return { cwd, warnings: stderr };
  }

  it('answers an action from a CommonJS project (require)', async () => {
    const { cwd, warnings } = await project('cjs-consumer', 'commonjs');
    expect(warnings).not.toMatch(/npm warn/i);
    writeFileSync(
      join(cwd, 'index.js'),
      `const { createClient, createJourney } = require('@login-frontend/client');
const journey = createJourney(createClient({ baseUrl: process.argv[2] }));
journey.login({ identifier: '+39 333 123 4567' }).then((answer) => console.log(JSON.stringify({ answer, step: journey.state.step })));
`,
    );
    const { stdout } = await node('index.js', cwd, service.url);
    expect(JSON.parse(stdout)).toMatchObject({
      answer: { success: true, error: null, data: { next_step: 14, flow: 'phone' } },
      step: 14,
    });
    expect(await typeErrors(cwd)).toBe('');
  }, 120_000);

  it('answers an action from an ES module project (import)', async () => {
    const { cwd, warnings } = await project('esm-consumer', 'module');
    expect(warnings).not.toMatch(/npm warn/i);
    writeFileSync(
      join(cwd, 'index.js'),
      `import { createClient } from '@login-frontend/client';
const answer = await createClient({ baseUrl: process.argv[2] }).FeLogin({ identifier: 'mario.rossi@example.com' });
console.log(JSON.stringify(answer));
`,
    );
    const { stdout } = await node('index.js', cwd, service.url);
    expect(JSON.parse(stdout)).toMatchObject({ success: true, error: null, data: { next_step: 33, flow: 'email' } });
    expect(await typeErrors(cwd)).toBe('');
  }, 120_000);
});
