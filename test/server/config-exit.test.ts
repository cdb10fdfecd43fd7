import { spawn } from 'node:child_process';
import { join } from 'node:path';

/*
 * otp.test_numbers refused at start-up leaves the real process (src/server.ts) by the exit of
 * every bad configuration: 78 (EX_CONFIG), the problem on stderr, and never a fixed code.
 */

const ROOT = join(__dirname, '..', '..');
const CODE = '246810';

function runServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SERVER__PORT: '0',
      SANDBOX__ENABLED: 'false',
      LOG__LEVEL: 'silent',
      OTP__LOG_FILE: '',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

describe('test numbers at start-up (the real process)', () => {
  it('exits 78 when NODE_ENV=production and otp.test_numbers_in_production is not set', async () => {
    const { code, stderr } = await runServer({
      NODE_ENV: 'production',
      SECURITY__SECRET: 's'.repeat(40),
      OTP__TEST_NUMBERS: JSON.stringify({ '+393330000001': CODE }),
    });
    expect(code).toBe(78);
    expect(stderr).toContain('otp.test_numbers: fixed codes are refused in production');
    expect(stderr).not.toContain(CODE);
  });

  it('exits 78 with one line per unsafe switch in production: guard_primitives off, rate limits off, the demo on', async () => {
    const { code, stderr } = await runServer({
      NODE_ENV: 'production',
      SECURITY__SECRET: 's'.repeat(40),
      SECURITY__GUARD_PRIMITIVES: 'false',
      RATE_LIMITS__ENABLED: 'false',
      DEMO__ENABLED: 'true',
    });
    expect(code).toBe(78);
    expect(stderr).toContain(
      'security.guard_primitives: false (tokens and profiles for anyone) is refused in production',
    );
    expect(stderr).toContain('rate_limits.enabled: false (sends and guesses unmetered) is refused in production');
    expect(stderr).toContain('demo.enabled: the demo page is refused in production');
  });

  it('exits 78 for an identifier the phone normaliser refuses, as for any bad configuration', async () => {
    const { code, stderr } = await runServer({
      NODE_ENV: 'test',
      OTP__TEST_NUMBERS: JSON.stringify({ '+399999999': CODE }),
    });
    expect(code).toBe(78);
    expect(stderr).toContain('otp.test_numbers.');
    expect(stderr).toContain('not a valid phone number or email');
    expect(stderr).not.toContain(CODE);
  });
});
