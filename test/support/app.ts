import pino from 'pino';
import { deepMerge, loadConfig } from '../../src/core/config/load';
import type { Config } from '../../src/core/config/schema';
import { createDeps, type Deps, type DepsOverrides } from '../../src/domain/deps';
import { createApp, type AppOptions } from '../../src/http/app';

type Tree = Record<string, unknown>;

/** A configuration for tests: NODE_ENV=test and nothing else from the environment, sandbox off, fixed secret, silent logs. */
export function testConfig(overrides: Tree = {}): Config {
  return loadConfig({
    env: { NODE_ENV: 'test' },
    overrides: deepMerge(
      {
        log: { level: 'silent' },
        otp: { log_file: '' },
        security: { secret: 'test-secret-test-secret-test-secret-!!' },
      },
      overrides,
    ),
  });
}

export function testDeps(config: Config = testConfig(), overrides: DepsOverrides = {}): Deps {
  return createDeps(config, { log: pino({ level: 'silent' }), otpLog: pino({ level: 'silent' }), ...overrides });
}

/** The real Koa app; drive it with supertest's `request(app.callback())`. */
export function testApp(deps: Deps = testDeps(), options: AppOptions = {}) {
  return createApp(deps, options);
}
