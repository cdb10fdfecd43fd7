import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import nock from 'nock';
import request from 'supertest';
import { FUNNEL_COMMAND, funnelOutput } from '../../scripts/funnel';
import { JOURNEY_IDS } from '../../machines';
import {
  LEDGER_COMMAND,
  formatLedger,
  ledgerOutput,
  parseDuration,
  parseLedgerArgs,
  type LedgerOptions,
  type LedgerReport,
} from '../../scripts/ledger';
import {
  callService,
  operatorKey,
  readCommand,
  refusal,
  type CommandOption,
  type CommandSpec,
} from '../../scripts/lib/service';
import { loadConfig } from '../../src/core/config/load';
import { startService, type Service } from '../../src/service';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';
import { freePort } from '../support/ports';

/*
 * `npm run ledger` and `npm run funnel`, the operator commands that call a running service: they
 * find it where the service's own configuration puts it (CONFIG_FILE, SERVER__HOST,
 * SERVER__PORT; --url above all), name the address they tried when nothing answers there, and
 * list every option on --help; the ledger prints the service's report as the terminal shows it.
 */

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
/** The environment a command runs in: the machine's, without what would point it elsewhere. */
const bare = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', ...extra };
  return env;
};

describe('npm run ledger', () => {
  useNock();

  it('reads --since as seconds, minutes, hours or days', () => {
    expect(parseDuration('1h')).toBe(3600);
    expect(parseDuration('90m')).toBe(5400);
    expect(parseDuration('7d')).toBe(604800);
    expect(parseDuration('30')).toBe(30);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
    expect(() => parseDuration('soon', 'it')).toThrow(/non è una durata/);
  });

  it('takes the key from the environment unless given, and refuses an option it does not have', () => {
    expect(parseLedgerArgs(['--since', '1h'], { SECURITY__INTERNAL_KEY: 'k', LANG: 'en_GB.UTF-8' })).toEqual({
      sinceSeconds: 3600,
      url: 'http://127.0.0.1:8080',
      locale: 'en',
      key: { header: 'x-internal-key', value: 'k', from: 'SECURITY__INTERNAL_KEY' },
      json: false,
    });
    expect(parseLedgerArgs(['--url', 'http://x/', '--key', 'y', '--lift', '447911'], {})).toMatchObject({
      url: 'http://x',
      key: { value: 'y', from: '--key' },
      lift: '447911',
    });
    expect(() => parseLedgerArgs(['--nope'], { LANG: 'en_US.UTF-8' })).toThrow('unknown option --nope (see --help)');
    expect(() => parseLedgerArgs(['--since'], { LANG: 'it_IT.UTF-8' })).toThrow(
      '--since vuole un valore (vedi --help)',
    );
  });

  it("prints conversion by country and provider from the service's ledger", async () => {
    const config = testConfig({
      otp: { debug: true },
      security: { internal_key: 'ops-key-123456' },
      sms: { api_url: 'https://sms.example.test/send', api_key: 'k' },
    });
    const app = testApp(testDeps(config)).callback();
    nock('https://sms.example.test').post('/send').times(2).reply(200, {});
    const first = await request(app).post('/otp_generate').send({ uid: '+393331234567' });
    await request(app).post('/otp_generate').send({ uid: '+393339876543' });
    await request(app).post('/verify_otp').send({ email: '+393331234567', otp_code: first.body.data.otp });
    await new Promise((resolve) => setImmediate(resolve));
    const report = (await request(app).get('/_sms/ledger?since=3600').set('x-internal-key', 'ops-key-123456')).body
      .data as LedgerReport;
    const english = formatLedger(report, 'en');
    // sent, delivered, failed, waiting, no receipts, receipt late, verified: the gateway posts no receipts.
    expect(english).toMatch(/IT\s+gateway\s+sms\s+2\s+0\s+2\s+0\s+0\s+0\s+2\s+0\s+1\s+50\.0%/);
    expect(english).toContain('No range blocked.');
    expect(english).toContain('gateway (SMS): working; no receipts');
    const italian = formatLedger(report, 'it');
    expect(italian).toMatch(/IT\s+gateway\s+sms\s+2\s+0\s+2\s+0\s+0\s+0\s+2\s+0\s+1\s+50,0%/);
    expect(italian).toContain('gateway (SMS): in funzione; senza ricevute');
  });
});

describe('operator commands find the service', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'commands-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('take the address from SERVER__HOST and SERVER__PORT, from CONFIG_FILE, and from --url above both', () => {
    expect(readCommand(LEDGER_COMMAND, [], { SERVER__PORT: '19200' })).toMatchObject({ url: 'http://127.0.0.1:19200' });
    expect(readCommand(FUNNEL_COMMAND, [], { SERVER__HOST: '0.0.0.0', SERVER__PORT: '19201' })).toMatchObject({
      url: 'http://127.0.0.1:19201',
    });
    expect(readCommand(FUNNEL_COMMAND, [], { SERVER__HOST: '::', SERVER__PORT: '19202' })).toMatchObject({
      url: 'http://[::1]:19202',
    });
    // A production configuration the service itself would refuse here (a short secret, NODE_ENV unset): a command only needs the address.
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      'server:\n  host: 10.1.2.3\n  port: 19300\nsecurity:\n  secret: short\nmail:\n  default_locale: en\n',
    );
    expect(readCommand(LEDGER_COMMAND, [], { CONFIG_FILE: file })).toMatchObject({
      url: 'http://10.1.2.3:19300',
      locale: 'en',
    });
    expect(readCommand(LEDGER_COMMAND, [], { CONFIG_FILE: file, SERVER__PORT: '19301' })).toMatchObject({
      url: 'http://10.1.2.3:19301',
    });
    expect(readCommand(LEDGER_COMMAND, ['--url', 'http://elsewhere:1/'], { CONFIG_FILE: file })).toMatchObject({
      url: 'http://elsewhere:1',
    });
    expect(() => readCommand(LEDGER_COMMAND, [], { SERVER__PORT: 'eighty', LANG: 'en_US.UTF-8' })).toThrow(
      /server\.port/,
    );
    expect(() => readCommand(LEDGER_COMMAND, ['--url', '127.0.0.1:19200'], { LANG: 'en_US.UTF-8' })).toThrow(
      '--url 127.0.0.1:19200: an http(s) address such as http://127.0.0.1:8080',
    );
  });

  it('answer --help with every option, in the language chosen', () => {
    for (const command of [LEDGER_COMMAND, FUNNEL_COMMAND] as Array<CommandSpec<Record<string, CommandOption>>>) {
      for (const LANG of ['en_US.UTF-8', 'it_IT.UTF-8']) {
        const answer = readCommand(command, ['--help'], { LANG, SERVER__PORT: '19200' });
        expect('help' in answer).toBe(true);
        const help = (answer as { help: string }).help;
        for (const option of [...Object.keys(command.options), 'url', 'locale', 'help'])
          expect(help).toContain(`--${option}`);
        expect(help).toContain('http://127.0.0.1:19200');
        expect(help).toContain(LANG.startsWith('en') ? 'Options:' : 'Opzioni:');
      }
    }
  });

  it('name the address they tried when nothing answers there', async () => {
    const port = await freePort();
    const command = readCommand(LEDGER_COMMAND, [], { SERVER__PORT: String(port), LANG: 'en_US.UTF-8' });
    if ('help' in command) throw new Error('no help asked');
    await expect(callService(command, '/_sms/ledger')).rejects.toThrow(
      `no answer from http://127.0.0.1:${port} (ECONNREFUSED)`,
    );
  });

  describe('run as npm runs them, against a service on a port that is not 8080', () => {
    let service: Service;
    beforeAll(async () => {
      service = await startService(
        loadConfig({
          env: {
            NODE_ENV: 'development',
            SANDBOX__ENABLED: 'true',
            SERVER__PORT: '0',
            LOG__LEVEL: 'silent',
            OTP__LOG_FILE: '',
          },
        }),
      );
      await fetch(`${service.url}/?action=otp_generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"uid":"+393331234567"}',
      });
    });
    afterAll(() => service.close());

    it('ledger and funnel find it from SERVER__PORT alone', async () => {
      const port = new URL(service.url).port;
      const ledger = await run(TSX, ['scripts/ledger.ts', '--since', '1h'], {
        cwd: ROOT,
        env: bare({ SERVER__PORT: port, LANG: 'en_US.UTF-8' }),
      });
      expect(ledger.stdout).toMatch(/IT\s+gateway\s+sms\s+1\s+/);
      const funnel = await run(TSX, ['scripts/funnel.ts', '--since', '1h'], {
        cwd: ROOT,
        env: bare({ SERVER__PORT: port }),
      });
      expect(funnel.stdout).toContain('Accesso con il telefono');
    }, 60_000);

    it('and say where they looked when it is not there', async () => {
      const port = String(await freePort());
      const failed = await run(TSX, ['scripts/ledger.ts'], {
        cwd: ROOT,
        env: bare({ SERVER__PORT: port, LANG: 'it_IT.UTF-8' }),
      }).catch((err: { code: number; stderr: string }) => err);
      expect(failed).toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`ledger: nessuna risposta da http://127.0.0.1:${port} (ECONNREFUSED)`),
      });
      const help = await run(TSX, ['scripts/funnel.ts', '--help'], {
        cwd: ROOT,
        env: bare({ SERVER__PORT: port, LANG: 'en_US.UTF-8' }),
      });
      expect(help.stdout).toContain(`--url <base>`);
      expect(help.stdout).toContain(`http://127.0.0.1:${port}`);
    }, 60_000);
  });
});

describe('operator keys: one order for both commands, and a refusal that says what is wrong', () => {
  const KEY = 'operator-internal-key-0123456789abcdef';
  const READ_KEY = 'operator-funnel-read-key-0123456789ab';
  let dir: string;
  let service: Service;
  let configFile: string;
  const en = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ LANG: 'en_US.UTF-8', ...extra });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => 'no failure',
      (err: Error) => err.message,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keys-'));
    // A production file the service itself would refuse here (a short secret): a command reads only what it needs.
    configFile = join(dir, 'config.yaml');
    writeFileSync(configFile, `security:\n  secret: short\n  internal_key: ${KEY}\n`);
    service = await startService(
      testConfig({
        server: { host: '127.0.0.1', port: 0 },
        security: { internal_key: KEY },
        funnel: { read_key: READ_KEY },
      }),
    );
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the key from --key, then the environment, then CONFIG_FILE through the service loader; FUNNEL_KEY for the funnel only', () => {
    const readOnly = join(dir, 'read-only.json');
    writeFileSync(readOnly, JSON.stringify({ funnel: { read_key: READ_KEY } }));
    const all = {
      SECURITY__INTERNAL_KEY: 'from-security',
      INTERNAL_KEY: 'from-internal',
      FUNNEL_KEY: 'from-funnel',
      CONFIG_FILE: configFile,
    };
    expect(operatorKey('given', all)).toEqual({ header: 'x-internal-key', value: 'given', from: '--key' });
    expect(operatorKey(undefined, all)).toEqual({
      header: 'x-internal-key',
      value: 'from-security',
      from: 'SECURITY__INTERNAL_KEY',
    });
    expect(operatorKey(undefined, { ...all, SECURITY__INTERNAL_KEY: '' })).toMatchObject({
      value: 'from-internal',
      from: 'INTERNAL_KEY',
    });
    expect(operatorKey(undefined, { FUNNEL_KEY: 'from-funnel', CONFIG_FILE: configFile }, { funnel: true })).toEqual({
      header: 'x-funnel-key',
      value: 'from-funnel',
      from: 'FUNNEL_KEY',
    });
    // The ledger is no funnel: a funnel key opens nothing there.
    expect(operatorKey(undefined, { FUNNEL_KEY: 'from-funnel', CONFIG_FILE: configFile })).toEqual({
      header: 'x-internal-key',
      value: KEY,
      from: 'CONFIG_FILE (security.internal_key)',
    });
    expect(operatorKey(undefined, { CONFIG_FILE: readOnly }, { funnel: true })).toEqual({
      header: 'x-funnel-key',
      value: READ_KEY,
      from: 'CONFIG_FILE (funnel.read_key)',
    });
    expect(operatorKey(undefined, { CONFIG_FILE: readOnly })).toBeUndefined();
    expect(operatorKey(undefined, {})).toBeUndefined();
    // Both commands read it the same way.
    expect(parseLedgerArgs([], { CONFIG_FILE: configFile })).toMatchObject({
      key: { value: KEY, from: 'CONFIG_FILE (security.internal_key)' },
    });
    // A file whose key section is wrong is named without its values.
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'security:\n  internal_kee: leaked-value\n');
    expect(() => operatorKey(undefined, { CONFIG_FILE: bad }, { locale: 'en' })).toThrow(/security: Unrecognized key/);
    expect(() => operatorKey(undefined, { CONFIG_FILE: bad }, { locale: 'en' })).not.toThrow(/leaked-value/);
  });

  it('funnel --journey nope lists the journeys there are, and blames no key', async () => {
    const message = await failure(
      funnelOutput(['--journey', 'nope', '--url', service.url], en({ SECURITY__INTERNAL_KEY: KEY })),
    );
    expect(message).toBe(`--journey nope: no journey of that name; there are ${JOURNEY_IDS.join(', ')}`);
    expect(JOURNEY_IDS).toContain('phone-login');
    expect(await failure(funnelOutput(['--journey', 'nope', '--url', service.url], { LANG: 'it_IT.UTF-8' }))).toMatch(
      /^--journey nope: nessun percorso con questo nome; ci sono phone-login/,
    );
  });

  it('names the key only when the service refused it, and where it came from, never its value', async () => {
    const wrong = 'wrong-key-wrong-key-wrong-key-0123';
    for (const [env, from] of [
      [{ SECURITY__INTERNAL_KEY: wrong }, 'SECURITY__INTERNAL_KEY'],
      [{ FUNNEL_KEY: wrong }, 'FUNNEL_KEY'],
    ] as const) {
      const message = await failure(funnelOutput(['--url', service.url], en(env)));
      expect(message).toBe(
        `the service refused the key taken from ${from}: it is not its security.internal_key (or, for the funnel, funnel.read_key)`,
      );
    }
    const ledgerRefused = await failure(
      ledgerOutput({ ...(parseLedgerArgs(['--url', service.url, '--key', wrong], en()) as LedgerOptions) }),
    );
    expect(ledgerRefused).toContain('the service refused the key taken from --key');
    // No key at all: where to put one, not a refused key.
    expect(await failure(funnelOutput(['--url', service.url], en()))).toBe(
      "an operator's key is needed: --key, SECURITY__INTERNAL_KEY, INTERNAL_KEY or FUNNEL_KEY, or security.internal_key (or funnel.read_key) in CONFIG_FILE",
    );
    expect(await failure(ledgerOutput(parseLedgerArgs(['--url', service.url], en()) as LedgerOptions))).toMatch(
      /^an operator's key is needed: --key, SECURITY__INTERNAL_KEY or INTERNAL_KEY, or security\.internal_key in CONFIG_FILE$/,
    );
    // The right keys, from each place, read the figures.
    expect(await funnelOutput(['--url', service.url, '--since', '1h'], en({ CONFIG_FILE: configFile }))).toContain(
      'Log in with a phone: started',
    );
    expect(await funnelOutput(['--url', service.url, '--since', '1h'], en({ FUNNEL_KEY: READ_KEY }))).toContain(
      'Log in with a phone: started',
    );
    expect(
      await ledgerOutput(parseLedgerArgs(['--url', service.url], en({ CONFIG_FILE: configFile })) as LedgerOptions),
    ).toContain('No code sent in this period.');
  });

  it("a refusal that is not about the key gives the service's words and what it found wrong", () => {
    const invalid = refusal(
      { locale: 'en' },
      400,
      {
        error: 'Invalid request.',
        data: { reason: 'invalid_request', issues: [{ path: 'since', message: 'must be minutes, hours or days' }] },
      },
      { header: 'x-internal-key', value: KEY, from: 'SECURITY__INTERNAL_KEY' },
    );
    expect(invalid.message).toBe('400: Invalid request. (since: must be minutes, hours or days)');
    expect(invalid.message).not.toMatch(/KEY|key/);
  });

  it('after too many wrong keys says the address is locked out, the right key too, naming where the key came from', async () => {
    const wrong = 'another-wrong-key-0123456789abcdef';
    let message = '';
    for (let i = 0; i < 8 && !message.includes('Too many wrong keys'); i++)
      message = await failure(funnelOutput(['--url', service.url], en({ INTERNAL_KEY: wrong })));
    expect(message).toMatch(
      /^Too many requests\. Try again in \d+ seconds\. Too many wrong keys from this address: every key is refused until then, the right one too \(the last taken from INTERNAL_KEY\)\.$/,
    );
    expect(await failure(funnelOutput(['--url', service.url], en({ SECURITY__INTERNAL_KEY: KEY })))).toContain(
      'Too many wrong keys from this address',
    );
    expect(message).not.toContain(wrong);
  });
});
