import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';

/*
 * Production is the default, not a spelling (docs/security.md, third round): the real process
 * refuses any NODE_ENV but the three, judges an unset one as production once anything is
 * configured, and, started with acknowledged unsafe switches, says so once per switch in its log
 * and on /readyz to an operator.
 */

const ROOT = join(__dirname, '..', '..');
const SECRET = 'production-mode-secret-0123456789abcdef';
const INTERNAL_KEY = 'production-mode-internal-key-0123456789';
const base = { PATH: process.env.PATH ?? '', SERVER__HOST: '127.0.0.1', OTP__LOG_FILE: '', LOG__LEVEL: 'warn' };

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

function run(env: Record<string, string>) {
  child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...base, SERVER__PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (out.stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (out.stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
  return { out, exited };
}

describe('NODE_ENV at start-up (the real process)', () => {
  it.each(['Production', 'prod'])(
    'refuses NODE_ENV=%s with exit 78, naming the three it accepts, and never starts the sandbox',
    async (spelling) => {
      const { out, exited } = run({ NODE_ENV: spelling, OTP__DEBUG: 'true' });
      expect(await exited).toBe(78);
      expect(out.stderr).toContain('NODE_ENV: must be one of production, development, test');
      expect(out.stdout).not.toContain('sandbox');
    },
  );

  it('treats an unset NODE_ENV with an upstream configured as production: codes in answers refused', async () => {
    const { out, exited } = run({
      IDENTITY__BASE_URL: 'http://127.0.0.1:9/idp',
      OTP__DEBUG: 'true',
      SECURITY__SECRET: SECRET,
    });
    expect(await exited).toBe(78);
    expect(out.stderr).toContain('otp.debug: plain codes in answers are refused in production');
  });
});

describe('a configuration given only in the environment (a container, a Kubernetes pod)', () => {
  // NODE_ENV unset, no CONFIG_FILE: an SMS provider, Redis and the secret, as a deployment sets them.
  const deployment = {
    SMS__PROVIDERS: JSON.stringify([
      { kind: 'twilio', account_sid: 'AC0123456789', auth_token: 'twilio-auth-token', from: '+15005550006' },
    ]),
    REDIS__URL: 'redis://127.0.0.1:9',
    SECURITY__SECRET: SECRET,
  };

  it('starts in production: a short secret is refused with exit 78', async () => {
    const { out, exited } = run({ ...deployment, SECURITY__SECRET: 'short' });
    expect(await exited).toBe(78);
    expect(out.stderr).toContain('security.secret: at least 32 characters are required in production');
    expect(out.stdout).not.toContain('sandbox');
  });

  it('starts in production with its own provider, never serves /_sandbox, and its start line names the key that decided, not its value', async () => {
    const port = await freePort();
    const { out } = run({ ...deployment, SERVER__PORT: String(port), LOG__LEVEL: 'info' });
    const started = await eventually(
      () => {
        const line = out.stdout.split('\n').find((l) => l.includes('listening on'));
        if (!line) throw new Error(`not started yet: ${out.stderr}`);
        return JSON.parse(line) as { msg: string; environment: string; decided_by: string; sandbox: boolean };
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    // The first configuration variable by name decides (the log level here, as any other would).
    expect(started).toMatchObject({ environment: 'production', decided_by: 'LOG__LEVEL', sandbox: false });
    expect(started.msg).toContain('production (LOG__LEVEL is set and NODE_ENV is not)');
    for (const value of ['redis://127.0.0.1:9', SECRET, 'twilio-auth-token']) expect(out.stdout).not.toContain(value);
    for (const path of ['/_sandbox/outbox', '/_sandbox/outbox.html', '/_sandbox/reset']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      expect(res.status).not.toBe(200);
    }
    // No fake took the provider's place: the ledger's provider is the configured Twilio (read with no key: refused, as production refuses).
    expect((await fetch(`http://127.0.0.1:${port}/_sms/ledger`)).status).toBe(401);
  });
});

describe('nothing configured but where it listens (`SERVER__PORT=8081 npm start`)', () => {
  it('lands in the sandbox, and its start line says nothing was configured', async () => {
    const port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', SERVER__HOST: '127.0.0.1', SERVER__PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const started = await eventually(
      () => {
        const line = stdout.split('\n').find((l) => l.includes('listening on'));
        if (!line) throw new Error('not started yet');
        return JSON.parse(line) as { msg: string; environment: string; decided_by: string; sandbox: boolean };
      },
      { timeoutMs: 45_000, intervalMs: 100 },
    );
    expect(started).toMatchObject({ environment: 'development', decided_by: '', sandbox: true });
    expect(started.msg).toContain('development (nothing configured');
    expect((await fetch(`http://127.0.0.1:${port}/_sandbox/outbox`)).status).toBe(200);
  }, 60_000);
});

describe('acknowledged unsafe switches in production', () => {
  it('logs one warn line per switch at start and lists them on /readyz for the internal key only', async () => {
    const port = await freePort();
    const { out } = run({
      NODE_ENV: 'production',
      SERVER__PORT: String(port),
      SECURITY__SECRET: SECRET,
      SECURITY__INTERNAL_KEY: INTERNAL_KEY,
      IDENTITY__BASE_URL: 'http://127.0.0.1:9/idp',
      RATE_LIMITS__ENABLED: 'false',
      RATE_LIMITS__DISABLED_IN_PRODUCTION: 'true',
      SECURITY__GUARD_PRIMITIVES: 'false',
      SECURITY__GUARD_PRIMITIVES_OFF_IN_PRODUCTION: 'true',
      DEMO__ENABLED: 'true',
      DEMO__ENABLED_IN_PRODUCTION: 'true',
    });
    const readyz = (headers: Record<string, string> = {}) =>
      fetch(`http://127.0.0.1:${port}/readyz`, { headers }).then(
        (res) => res.json() as Promise<{ data: Record<string, unknown> }>,
      );
    const operator = await eventually(() => readyz({ 'x-internal-key': INTERNAL_KEY }), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });

    const warned = out.stdout
      .split('\n')
      .filter((line) => line.includes('"event":"weakened_defence"'))
      .map((line) => JSON.parse(line) as { key: string; level: number });
    expect(warned.map((w) => w.key)).toEqual(['rate_limits.enabled', 'security.guard_primitives', 'demo.enabled']);
    expect(warned.every((w) => w.level === 40)).toBe(true);
    expect(operator.data.unsafe).toEqual([
      { key: 'rate_limits.enabled', exposes: expect.any(String) },
      { key: 'security.guard_primitives', exposes: expect.any(String) },
      { key: 'demo.enabled', exposes: expect.any(String) },
    ]);
    // Upstreams nobody configured: one line each, and on /readyz beside the weakened defences.
    const missing = out.stdout
      .split('\n')
      .filter((line) => line.includes('"event":"config_warning"'))
      .map((line) => (JSON.parse(line) as { key: string }).key);
    // And metrics nobody can scrape: no metrics.token, no metrics.port.
    expect(missing).toEqual(['mail.host', 'sms.providers', 'user_collector.base_url', 'metrics.port']);
    expect((operator.data.warnings as Array<{ key: string }>).map((w) => w.key)).toEqual(missing);
    // Which defences are off is a map for an attacker: not for whoever reaches /readyz.
    expect(await readyz()).toEqual({ success: true, error: null, data: { status: 'ready' } });
  });
});
