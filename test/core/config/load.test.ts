import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  chooseEnvironment,
  describeEnvironment,
  loadConfig,
  loadConfiguration,
} from '../../../src/core/config/load';

const tmp = mkdtempSync(join(tmpdir(), 'cfg-'));
const file = (name: string, text: string) => {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
};
const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('configuration', () => {
  it('has the defaults of the contract', () => {
    const config = loadConfig({ env: {} });
    expect(config.otp).toMatchObject({
      ttl_seconds: 300,
      length: 6,
      resend_cooldown_seconds: 60,
      debug: false,
      max_attempts: 5,
    });
    expect(config.recommendations).toMatchObject({ user_id_prefix: 'usi', timeout: 10 });
    expect(config.user_collector).toMatchObject({ ingest_login_path: '/ingest/login', timeout: 20 });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080, body_limit: 65536 });
    expect(config.sms.default_region).toBe('IT');
    expect(config.security.guard_primitives).toBe(true);
  });

  it('turns the sandbox on only when nothing is configured', () => {
    expect(loadConfig({ env: {} }).sandbox.enabled).toBe(true);
    expect(loadConfig({ env: { NODE_ENV: 'test', IDENTITY__BASE_URL: 'https://idp.example' } }).sandbox.enabled).toBe(
      false,
    );
    expect(loadConfig({ env: { NODE_ENV: 'test', CONFIG_FILE: file('empty.json', '{}') } }).sandbox.enabled).toBe(
      false,
    );
    expect(loadConfig({ env: { NODE_ENV: 'test', SANDBOX__ENABLED: 'false' } }).sandbox.enabled).toBe(false);
    // Any configuration variable, an upstream or not, with NODE_ENV named: no sandbox by default, the fakes when asked for.
    expect(loadConfig({ env: { NODE_ENV: 'development', REDIS__URL: 'redis://10.0.0.1:6379' } }).sandbox.enabled).toBe(
      false,
    );
    expect(
      loadConfig({ env: { NODE_ENV: 'development', LOG__LEVEL: 'silent', SANDBOX__ENABLED: 'true' } }).sandbox.enabled,
    ).toBe(true);
    // Where it listens is no configuration: still the sandbox.
    expect(loadConfiguration({ env: { SERVER__HOST: '0.0.0.0', SERVER__PORT: '0' } })).toMatchObject({
      environment: 'development',
      decidedBy: '',
      config: { sandbox: { enabled: true } },
    });
  });

  it('deep-merges a JSON file over the defaults', () => {
    const path = file('c.json', JSON.stringify({ otp: { ttl_seconds: 120 }, identity: { aid: 'AID1' } }));
    const config = loadConfig({ env: { NODE_ENV: 'test', CONFIG_FILE: path } });
    expect(config.otp.ttl_seconds).toBe(120);
    expect(config.otp.length).toBe(6);
    expect(config.identity.aid).toBe('AID1');
  });

  it('reads a YAML file too', () => {
    const path = file('c.yaml', 'otp:\n  resend_cooldown_seconds: 30\nnewsletter:\n  api_keys:\n    head_b: kb\n');
    const config = loadConfig({ env: { NODE_ENV: 'test', CONFIG_FILE: path } });
    expect(config.otp.resend_cooldown_seconds).toBe(30);
    expect(config.newsletter.api_keys.head_b).toBe('kb');
  });

  it('lets the environment override any key, with numbers and booleans parsed', () => {
    const path = file('d.json', JSON.stringify({ server: { port: 9000 } }));
    const config = loadConfig({
      env: {
        NODE_ENV: 'test',
        CONFIG_FILE: path,
        SERVER__PORT: '8081',
        OTP__TTL_SECONDS: '120',
        OTP__DEBUG: 'true',
        NEWSLETTER__API_KEYS__HEAD_A: 'k',
        IDENTITY__AID: '12345',
        DEBUG: 'true',
        SERVER__CORS_ORIGINS: 'https://a.example, https://b.example',
      },
    });
    expect(config.server.port).toBe(8081);
    expect(config.otp.ttl_seconds).toBe(120);
    expect(config.otp.debug).toBe(true);
    expect(config.newsletter.api_keys.head_a).toBe('k');
    expect(config.identity.aid).toBe('12345');
    expect(config.debug).toBe(true);
    expect(config.server.cors_origins).toEqual(['https://a.example', 'https://b.example']);
  });

  it('ignores environment variables that belong to other tools', () => {
    expect(() => loadConfig({ env: { DEBUG: 'express:*', PATH: '/bin', HOME: '/root' } })).not.toThrow();
  });

  it('rejects a bad value with one line naming the key', () => {
    const problems = problemsOf(() => loadConfig({ env: { OTP__TTL_SECONDS: 'soon', SERVER__PORT: '70000' } }));
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.startsWith('otp.ttl_seconds:'))).toContain('"soon"');
    expect(problems.find((p) => p.startsWith('server.port:'))).toBeDefined();
  });

  it('refuses a list or map variable that is not JSON with one line naming its key, never quoting a secret one', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          NODE_ENV: 'test',
          SMS__PROVIDERS: '[{"kind":"twilio","auth_token":"hunter2"',
          OTP__TEST_NUMBERS: "{'+393330000000':'123456'}",
          SMS__CHANNELS: 'IT=sms',
        },
      }),
    );
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['otp.test_numbers', 'sms.channels', 'sms.providers']);
    expect(problems.find((p) => p.startsWith('sms.providers:'))).toMatch(
      /^sms\.providers: is not valid JSON: in the environment this list is one JSON list/,
    );
    expect(problems.find((p) => p.startsWith('otp.test_numbers:'))).toMatch(
      /^otp\.test_numbers: is not valid JSON: in the environment this map is one JSON object/,
    );
    // A secret key's value stays out of the line, parser message included (it quotes the input).
    expect(problems.join('\n')).not.toMatch(/hunter2|123456/);
    // The same value as JSON is read.
    expect(loadConfig({ env: { NODE_ENV: 'test', SMS__CHANNELS: '{"IT":["sms"]}' } }).sms.channels).toEqual({
      IT: ['sms'],
    });
  });

  it('rejects unknown keys by name, so typos are caught', () => {
    const path = file('typo.json', JSON.stringify({ otp: { ttl_second: 10 }, unknown_section: {} }));
    const problems = problemsOf(() => loadConfig({ env: { CONFIG_FILE: path } }));
    expect(problems).toEqual(
      expect.arrayContaining([
        'otp.ttl_second: unknown key; did you mean otp.ttl_seconds?',
        'unknown_section: unknown key',
      ]),
    );
  });

  it('names an unknown key from the environment by its variable, with the nearest known one', () => {
    expect(problemsOf(() => loadConfig({ env: { NODE_ENV: 'test', SERVER__PROT: '1' } }))).toEqual([
      'SERVER__PROT: unknown; did you mean SERVER__PORT?',
    ]);
    expect(problemsOf(() => loadConfig({ env: { NODE_ENV: 'test', sms__breaker__failure: '3' } }))).toEqual([
      'sms__breaker__failure: unknown; did you mean SMS__BREAKER__FAILURES?',
    ]);
    // Nothing near: no guess.
    expect(problemsOf(() => loadConfig({ env: { NODE_ENV: 'test', OTP__COLOUR: 'blue' } }))).toEqual([
      'OTP__COLOUR: unknown',
    ]);
    // The same key from a file is named by its path.
    expect(
      problemsOf(() =>
        loadConfig({ env: { NODE_ENV: 'test', CONFIG_FILE: file('prot.yaml', 'server:\n  prot: 1\n') } }),
      ),
    ).toEqual(['server.prot: unknown key; did you mean server.port?']);
  });

  it('refuses "*" in server.cors_origins with its reason, and what a browser would never send as an Origin', () => {
    const star = problemsOf(() => loadConfig({ env: { NODE_ENV: 'test', SERVER__CORS_ORIGINS: '*' } }));
    expect(star).toEqual([
      expect.stringMatching(
        /^server\.cors_origins\.0: "\*" is refused: answers allow credentials .* every site could call the API in its visitors' name/,
      ),
    ]);
    // Mixed into a list, in development too: never honoured by accident.
    expect(
      problemsOf(() =>
        loadConfig({ env: { NODE_ENV: 'development', SERVER__CORS_ORIGINS: 'https://a.example,*' } }),
      ).map((p) => p.split(':')[0]),
    ).toEqual(['server.cors_origins.1']);
    const shapes = problemsOf(() =>
      loadConfig({
        env: {
          NODE_ENV: 'test',
          SERVER__CORS_ORIGINS: 'https://a.example/,https://A.example,a.example,null,ftp://a.example',
        },
      }),
    );
    expect(shapes.map((p) => p.split(':')[0])).toEqual([
      'server.cors_origins.0',
      'server.cors_origins.1',
      'server.cors_origins.2',
      'server.cors_origins.3',
      'server.cors_origins.4',
    ]);
    expect(shapes[0]).toContain('(https://a.example)');
    expect(
      loadConfig({ env: { NODE_ENV: 'test', SERVER__CORS_ORIGINS: 'https://login.example.com,http://localhost:5173' } })
        .server.cors_origins,
    ).toEqual(['https://login.example.com', 'http://localhost:5173']);
  });

  it('needs a Twilio provider, for SMS or WhatsApp, to name what it sends from', () => {
    const account = { account_sid: 'AC1', auth_token: 't' };
    const providers = [
      { kind: 'twilio', ...account },
      { kind: 'twilio_whatsapp', ...account, content_sid: `HX${'0'.repeat(32)}` },
      { kind: 'twilio', ...account, messaging_service_sid: 'MG1' },
      { kind: 'twilio_whatsapp', ...account, from: '+15005550006', content_sid: `HX${'0'.repeat(32)}` },
    ];
    const problems = problemsOf(() =>
      loadConfig({ env: { CONFIG_FILE: file('twilio.json', JSON.stringify({ sms: { providers } })) } }),
    );
    expect(
      problems.filter((p) => p.includes('needs from or messaging_service_sid')).map((p) => p.split(':')[0]),
    ).toEqual(['sms.providers.0.from', 'sms.providers.1.from']);
  });

  it('never echoes a secret in an error', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: { SMS__API_KEY: 'x', SECURITY__SECRET: 'sup3r', NODE_ENV: 'production', SANDBOX__ENABLED: 'false' },
      }),
    );
    expect(problems.join('\n')).not.toContain('sup3r');
    expect(problems.some((p) => p.startsWith('security.secret:'))).toBe(true);
  });

  it('never echoes a Redis URL, which may carry its password', () => {
    const path = file('redis-url.json', JSON.stringify({ redis: { url: ['redis://:hunter2@redis.internal:6379'] } }));
    const problems = problemsOf(() => loadConfig({ env: { CONFIG_FILE: path } }));
    expect(problems.some((p) => p.startsWith('redis.url:'))).toBe(true);
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('refuses the sandbox, otp.debug and debug in production', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          NODE_ENV: 'production',
          SANDBOX__ENABLED: 'true',
          OTP__DEBUG: 'true',
          DEBUG: 'true',
          SECURITY__SECRET: 'x'.repeat(40),
        },
      }),
    );
    expect(problems.map((p) => p.split(':')[0])).toEqual(['sandbox.enabled', 'otp.debug', 'debug']);
  });

  it('refuses guard_primitives off, rate limits off and the demo in production, one line each, unless each is acknowledged', () => {
    const unsafe = {
      NODE_ENV: 'production',
      SECURITY__SECRET: 'x'.repeat(40),
      SECURITY__GUARD_PRIMITIVES: 'false',
      RATE_LIMITS__ENABLED: 'false',
      DEMO__ENABLED: 'true',
    };
    expect(problemsOf(() => loadConfig({ env: unsafe })).map((p) => p.split(':')[0])).toEqual([
      'security.guard_primitives',
      'rate_limits.enabled',
      'demo.enabled',
    ]);
    const acknowledged = loadConfig({
      env: {
        ...unsafe,
        SECURITY__GUARD_PRIMITIVES_OFF_IN_PRODUCTION: 'true',
        RATE_LIMITS__DISABLED_IN_PRODUCTION: 'true',
        DEMO__ENABLED_IN_PRODUCTION: 'true',
      },
    });
    expect(acknowledged).toMatchObject({
      security: { guard_primitives: false },
      rate_limits: { enabled: false },
      demo: { enabled: true },
    });
    // Outside production the switches need no acknowledgement.
    expect(loadConfig({ env: { ...unsafe, NODE_ENV: 'development' } }).demo.enabled).toBe(true);
  });

  it('refuses passkeys in production without a relying party, its origins and a database, naming which are missing', () => {
    const env = { NODE_ENV: 'production', SECURITY__SECRET: 'x'.repeat(40), PASSKEYS__ENABLED: 'true' };
    expect(problemsOf(() => loadConfig({ env }))).toEqual([
      expect.stringMatching(
        /^passkeys\.enabled: refused in production without passkeys\.rp_id, passkeys\.origins, database\.url /,
      ),
    ]);
    expect(
      problemsOf(() =>
        loadConfig({ env: { ...env, PASSKEYS__RP_ID: 'example.com', DATABASE__URL: 'postgres://db/x' } }),
      ),
    ).toEqual([expect.stringMatching(/^passkeys\.enabled: refused in production without passkeys\.origins /)]);
    const complete = loadConfig({
      env: {
        ...env,
        PASSKEYS__RP_ID: 'example.com',
        PASSKEYS__ORIGINS: 'https://login.example.com,https://example.com',
        DATABASE__URL: 'postgres://lfa:pw@db:5432/lfa',
      },
    });
    expect(complete.passkeys).toMatchObject({
      enabled: true,
      origins: ['https://login.example.com', 'https://example.com'],
    });
    // A URL that is no PostgreSQL's is refused by the schema, its value never echoed (it may hold a password).
    const wrong = problemsOf(() => loadConfig({ env: { ...env, DATABASE__URL: 'mysql://u:secretpw@db/x' } }));
    expect(wrong.join('\n')).toMatch(/^database\.url: must be a postgres:\/\/ URL or empty$/m);
    expect(wrong.join('\n')).not.toContain('secretpw');
    // Off, nothing is asked for.
    expect(loadConfig({ env: { ...env, PASSKEYS__ENABLED: 'false' } }).passkeys.enabled).toBe(false);
  });

  describe('NODE_ENV', () => {
    const KEY = 'k'.repeat(32);

    it.each(['Production', 'prod', 'PRODUCTION', 'staging', 'dev'])(
      'refuses NODE_ENV=%s, naming the three it accepts',
      (spelling) => {
        const problems = problemsOf(() => loadConfig({ env: { NODE_ENV: spelling, OTP__DEBUG: 'true' } }));
        expect(problems).toEqual([expect.stringMatching(/^NODE_ENV: must be one of production, development, test/)]);
      },
    );

    it('is production when unset and anything is configured: codes in answers refused', () => {
      const configured = { CONFIG_FILE: file('dev-looking.json', JSON.stringify({ otp: { debug: true } })) };
      expect(problemsOf(() => loadConfig({ env: configured })).map((p) => p.split(':')[0])).toEqual([
        'otp.debug',
        'security.secret',
      ]);
      expect(
        problemsOf(() => loadConfig({ env: { IDENTITY__BASE_URL: 'https://idp.example', DEBUG: 'true' } })).map(
          (p) => p.split(':')[0],
        ),
      ).toEqual(['debug', 'security.secret']);
      expect(loadConfig({ env: { ...configured, NODE_ENV: 'development' } }).otp.debug).toBe(true);
    });

    describe('configuration from the environment alone (containers, Kubernetes)', () => {
      const twilio = JSON.stringify([
        { kind: 'twilio', account_sid: 'AC0123', auth_token: 'twilio-token', from: '+15005550006' },
      ]);
      const deployment = { SMS__PROVIDERS: twilio, REDIS__URL: 'redis://10.0.0.9:6379', SECURITY__SECRET: KEY };

      it('is production, with the configured provider, no sandbox, and the first variable named as what decided', () => {
        const loaded = loadConfiguration({ env: deployment });
        expect(loaded).toMatchObject({
          environment: 'production',
          decidedBy: 'REDIS__URL',
          config: { sandbox: { enabled: false }, challenge: { mode: 'adaptive' } },
        });
        expect(loaded.config.sms.providers.map((p) => p.kind)).toEqual(['twilio']);
        expect(describeEnvironment(loaded)).toBe('production (REDIS__URL is set and NODE_ENV is not)');
        expect(describeEnvironment(loaded)).not.toContain('10.0.0.9');
      });

      it('refuses what production refuses: a short secret', () => {
        expect(problemsOf(() => loadConfig({ env: { ...deployment, SECURITY__SECRET: 'short' } }))).toEqual([
          expect.stringMatching(/^security\.secret: at least 32 characters are required in production/),
        ]);
      });

      it.each([
        ['a variable that is no upstream', { LOG__LEVEL: 'debug' }],
        ['an empty one', { MAIL__HOST: '' }],
        ['a lower-case spelling', { otp__debug: 'false' }],
        ['a top-level switch', { DEBUG: 'false' }],
        ['the sandbox asked for by name', { SANDBOX__ENABLED: 'true' }],
      ])('never yields the sandbox: %s is configuration, so production', (_, env) => {
        const problems = problemsOf(() => loadConfig({ env }));
        expect(problems).toContain('security.secret: at least 32 characters are required in production');
        const choice = chooseEnvironment(env);
        expect(choice).toEqual({ environment: 'production', decidedBy: Object.keys(env)[0], configured: true });
      });

      it('never yields the sandbox with a misspelt NODE_ENV either: refused', () => {
        for (const spelling of ['Development', 'dev', 'test ', 'sandbox']) {
          expect(problemsOf(() => loadConfig({ env: { ...deployment, NODE_ENV: spelling } }))).toEqual([
            expect.stringMatching(/^NODE_ENV: must be one of/),
          ]);
        }
      });

      it('is development or test only when NODE_ENV names it, and then the sandbox only when asked for', () => {
        expect(loadConfiguration({ env: { ...deployment, NODE_ENV: 'development' } })).toMatchObject({
          environment: 'development',
          decidedBy: 'NODE_ENV',
          config: { sandbox: { enabled: false } },
        });
        expect(describeEnvironment(chooseEnvironment({ NODE_ENV: 'test' }))).toBe('test (NODE_ENV)');
        expect(describeEnvironment(chooseEnvironment({ SERVER__PORT: '0' }))).toMatch(
          /^development \(nothing configured/,
        );
        expect(chooseEnvironment({ CONFIG_FILE: '/etc/lfa.yaml', LOG__LEVEL: 'info' })).toMatchObject({
          environment: 'production',
          decidedBy: 'CONFIG_FILE',
        });
      });
    });

    it('lands in the sandbox when unset and nothing is configured, and not when production is named', () => {
      expect(loadConfiguration({ env: {} })).toMatchObject({
        environment: 'development',
        config: { sandbox: { enabled: true } },
      });
      expect(loadConfiguration({ env: { NODE_ENV: 'test' } })).toMatchObject({
        environment: 'test',
        config: { sandbox: { enabled: true } },
      });
      expect(loadConfiguration({ env: { NODE_ENV: 'production', SECURITY__SECRET: KEY } })).toMatchObject({
        environment: 'production',
        config: { sandbox: { enabled: false } },
      });
    });
  });

  describe('keys that resist guessing, in production', () => {
    const production = { NODE_ENV: 'production', SECURITY__SECRET: 's'.repeat(32) };

    it('refuses a short internal key, funnel key or metrics token, without echoing it', () => {
      const problems = problemsOf(() =>
        loadConfig({
          env: {
            ...production,
            SECURITY__INTERNAL_KEY: 'a',
            FUNNEL__READ_KEY: 'short-funnel',
            METRICS__TOKEN: 'x'.repeat(31),
          },
        }),
      );
      expect(problems.map((p) => p.split(':')[0])).toEqual([
        'security.internal_key',
        'funnel.read_key',
        'metrics.token',
      ]);
      expect(problems.join('\n')).not.toContain('short-funnel');
      expect(problemsOf(() => loadConfig({ env: { ...production, SECURITY__SECRET: 's'.repeat(31) } }))).toEqual([
        expect.stringMatching(/^security\.secret: at least 32 characters/),
      ]);
      const keys = {
        SECURITY__INTERNAL_KEY: 'i'.repeat(32),
        FUNNEL__READ_KEY: 'f'.repeat(32),
        METRICS__TOKEN: 'm'.repeat(32),
      };
      expect(loadConfig({ env: { ...production, ...keys } }).security.internal_key).toHaveLength(32);
      // Empty closes what the key opens: nothing to guess.
      expect(loadConfig({ env: production }).security.internal_key).toBe('');
    });

    it('refuses a code length and attempt count that give a guesser 1 chance in 10,000 or better', () => {
      const [fourDigits] = problemsOf(() =>
        loadConfig({ env: { ...production, OTP__LENGTH: '4', OTP__MAX_ATTEMPTS: '100000000' } }),
      );
      expect(fourDigits).toBe(
        'otp.max_attempts: 100000000 wrong tries on a 4-digit code give a guesser certainty; under 1 in 10,000 is required in production: otp.length 4 allows none (5 digits allow 9 tries, 6 allow 99)',
      );
      expect(problemsOf(() => loadConfig({ env: { ...production, OTP__MAX_ATTEMPTS: '100' } }))).toEqual([
        expect.stringContaining('at most 99 for otp.length 6'),
      ]);
      expect(loadConfig({ env: { ...production, OTP__MAX_ATTEMPTS: '99' } }).otp.max_attempts).toBe(99);
      expect(loadConfig({ env: { ...production, OTP__LENGTH: '5', OTP__MAX_ATTEMPTS: '9' } }).otp.length).toBe(5);
      // Outside production a short code is a test's choice.
      expect(loadConfig({ env: { NODE_ENV: 'test', OTP__LENGTH: '4' } }).otp.length).toBe(4);
    });

    it('refuses the pumping defence off unless acknowledged, receipts over http, and open metrics unless acknowledged', () => {
      const unsafe = {
        ...production,
        SMS__PUMPING__ENABLED: 'false',
        SMS__RECEIPTS__CALLBACK_BASE_URL: 'http://login.example.com',
        METRICS__PORT: '9464',
        METRICS__HOST: '0.0.0.0',
      };
      expect(problemsOf(() => loadConfig({ env: unsafe })).map((p) => p.split(':')[0])).toEqual([
        'sms.pumping.enabled',
        'sms.receipts.callback_base_url',
        'metrics.host',
      ]);
      const acknowledged = {
        ...unsafe,
        SMS__PUMPING__DISABLED_IN_PRODUCTION: 'true',
        METRICS__OPEN_IN_PRODUCTION: 'true',
        SMS__RECEIPTS__CALLBACK_BASE_URL: 'https://login.example.com',
      };
      expect(loadConfig({ env: acknowledged }).sms.pumping.enabled).toBe(false);
      expect(loadConfig({ env: { ...production, METRICS__PORT: '9464' } }).metrics.host).toBe('127.0.0.1');
    });
  });

  it('names an unreadable or malformed CONFIG_FILE', () => {
    expect(problemsOf(() => loadConfig({ env: { CONFIG_FILE: join(tmp, 'missing.json') } }))[0]).toMatch(
      /^CONFIG_FILE: cannot read/,
    );
    expect(problemsOf(() => loadConfig({ env: { CONFIG_FILE: file('bad.json', '{') } }))[0]).toMatch(
      /^CONFIG_FILE: .* is not valid JSON/,
    );
  });

  it('reads redis.cluster seed nodes as a list, from a file or REDIS__CLUSTER, and refuses what is not host:port', () => {
    expect(loadConfig({ env: {} }).redis.cluster).toEqual([]);
    expect(
      loadConfig({ env: { NODE_ENV: 'test', REDIS__CLUSTER: '10.0.0.1:7000, redis-b.internal:7001,[::1]:7002' } }).redis
        .cluster,
    ).toEqual(['10.0.0.1:7000', 'redis-b.internal:7001', '[::1]:7002']);
    expect(
      loadConfig({
        env: {
          NODE_ENV: 'test',
          CONFIG_FILE: file('cluster.yaml', 'redis:\n  cluster: [10.0.0.1:7000, 10.0.0.2:7000]\n'),
        },
      }).redis.cluster,
    ).toEqual(['10.0.0.1:7000', '10.0.0.2:7000']);
    const problems = problemsOf(() =>
      loadConfig({ env: { REDIS__CLUSTER: '10.0.0.1,10.0.0.2:7000,redis://h:7000,h:70000' } }),
    );
    expect(problems.map((p) => p.split(':')[0])).toEqual(['redis.cluster.0', 'redis.cluster.2', 'redis.cluster.3']);
    const fromFile = problemsOf(() =>
      loadConfig({
        env: {
          CONFIG_FILE: file('bad-cluster.json', JSON.stringify({ redis: { cluster: ['10.0.0.1:7000', '10.0.0.2'] } })),
        },
      }),
    );
    expect(fromFile).toEqual(['redis.cluster.1: must be host:port (got "10.0.0.2")']);
  });

  it('refuses braces in redis.key_prefix: they would make a hash tag of their own on a cluster', () => {
    expect(problemsOf(() => loadConfig({ env: { REDIS__KEY_PREFIX: 'app{1}:' } }))).toEqual([
      'redis.key_prefix: must not contain { or }',
    ]);
  });

  it('reads redis.username, redis.password and redis.tls from the environment, and never echoes the password', () => {
    expect(loadConfig({ env: {} }).redis).toMatchObject({ username: '', password: '', tls: false });
    expect(
      loadConfig({ env: { NODE_ENV: 'test', REDIS__USERNAME: 'app', REDIS__PASSWORD: '12345678', REDIS__TLS: 'true' } })
        .redis,
    ).toMatchObject({ username: 'app', password: '12345678', tls: true });
    const problems = problemsOf(() =>
      loadConfig({
        env: { NODE_ENV: 'test' },
        overrides: { redis: { password: ['hunter2-cluster'], tls: 'hunter3-cluster' } },
      }),
    );
    expect(problems.map((p) => p.split(':')[0])).toEqual(['redis.password', 'redis.tls']);
    expect(problems.join('\n')).not.toContain('hunter2-cluster');
    expect(problems.find((p) => p.startsWith('redis.tls:'))).toContain('hunter3-cluster');
  });

  it('accepts short durations so tests can run quickly', () => {
    expect(loadConfig({ env: { NODE_ENV: 'test', OTP__TTL_SECONDS: '1' } }).otp.ttl_seconds).toBe(1);
    expect(problemsOf(() => loadConfig({ env: { OTP__TTL_SECONDS: '0' } }))[0]).toMatch(/^otp.ttl_seconds:/);
  });
});
