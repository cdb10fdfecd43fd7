import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { banner, showsBanner } from '../../src/banner';
import { eventually } from '../support/eventually';

/*
 * `npm start` in a terminal, on the sandbox: a person reads where to go (the service, /demo,
 * /flows, the outbox page, how to stop); a process manager or production reads JSON lines only.
 * The terminal is a real pseudo-terminal (script(1), from util-linux's bsdutils, on every Debian
 * and Ubuntu): the server decides by process.stdout.isTTY, as it would for a person.
 */

const ROOT = join(__dirname, '..', '..');

describe('the start-up banner', () => {
  it('shows only for the sandbox on a terminal, never in production', () => {
    expect(showsBanner({ sandbox: true, terminal: true, production: false })).toBe(true);
    expect(showsBanner({ sandbox: true, terminal: false, production: false })).toBe(false);
    expect(showsBanner({ sandbox: false, terminal: true, production: false })).toBe(false);
    expect(showsBanner({ sandbox: true, terminal: true, production: true })).toBe(false);
  });

  it('names the service, the demo, the journeys, the outbox page and how to stop, on the service URL', () => {
    const text = banner('http://127.0.0.1:8080');
    for (const place of [
      'http://127.0.0.1:8080/demo',
      'http://127.0.0.1:8080/flows',
      'http://127.0.0.1:8080/_sandbox/outbox.html',
      'Ctrl+C',
    ])
      expect(text).toContain(place);
  });

  it('is printed by the real server on a pseudo-terminal, and not when its output is a pipe', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'development',
      SANDBOX__ENABLED: 'true',
      SERVER__PORT: '0',
      OTP__LOG_FILE: '',
      LOG__LEVEL: 'info',
      TERM: 'dumb',
    };
    const onTerminal = spawn('script', ['-qfec', `${process.execPath} --import tsx src/server.ts`, '/dev/null'], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const piped = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let terminalText = '';
    let pipedText = '';
    onTerminal.stdout.on('data', (chunk: Buffer) => (terminalText += chunk.toString('utf8')));
    piped.stdout.on('data', (chunk: Buffer) => (pipedText += chunk.toString('utf8')));
    try {
      await eventually(() => expect(terminalText).toMatch(/Stop with Ctrl\+C/), { timeoutMs: 20_000, intervalMs: 100 });
      expect(terminalText).toMatch(/Try it\s+http:\/\/127\.0\.0\.1:\d+\/demo/);
      // The Twilio fake's keys are made at this start, not read from the code: shown, so a second provider can be pointed at it.
      expect(terminalText).toMatch(/Fakes\s+SMS gateway\s+http:\/\/127\.0\.0\.1:\d+\/sms\s+Bearer sandbox-sms-key/);
      expect(terminalText).toMatch(
        /Twilio\s+http:\/\/127\.0\.0\.1:\d+\/twilio\s+account AC\w+, auth token [0-9a-f]{32} \(new at each start\)/,
      );
      await eventually(() => expect(pipedText).toContain('listening on'), { timeoutMs: 20_000, intervalMs: 100 });
      // On a pipe every line is JSON, for machines.
      for (const line of pipedText.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      onTerminal.kill('SIGTERM');
      piped.kill('SIGTERM');
      // script(1) passes the signal on; the server under it stops gracefully.
      await Promise.all(
        [onTerminal, piped].map(
          (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve))),
        ),
      );
    }
  }, 45_000);
});
