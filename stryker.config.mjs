import process from 'node:process';

// Mutation testing of the security modules (docs/security.md, "Mutation testing"): `npm run mutate`
// runs every module in turn, `npm run mutate -- proofs keys` only those named. Outside `npm test`:
// a module takes minutes. Each module is mutated against the tests that reach it, directly and
// through the app where that is where its checks are exercised (the real-socket key guessing, the
// Redis limits), with per-test coverage. Each mutant loads every test file of its module (Jest
// filters by test name), so a file that builds the whole app costs seconds per mutant: those are
// listed only where the module's own tests do not reach its checks.

/** Each module: the files mutated, and the tests that reach them. */
export const modules = {
  address: { mutate: ['src/core/address.ts'], tests: ['test/core/address.test.ts', 'test/security/addresses.test.ts'] },
  'client-address': {
    mutate: ['src/http/client-address.ts'],
    tests: [
      'test/http/client-address.test.ts',
      'test/security/client-address.test.ts',
      'test/security/transport-headers.test.ts',
    ],
  },
  proofs: { mutate: ['src/domain/proofs.ts'], tests: ['test/domain/proofs.test.ts', 'test/domain/guard.test.ts'] },
  keys: {
    mutate: ['src/domain/keys.ts', 'src/http/keys.ts'],
    tests: ['test/domain/keys.test.ts', 'test/security/key-guessing.test.ts'],
  },
  'otp-key': {
    mutate: ['src/domain/otp/key.ts'],
    tests: ['test/domain/otp/key.test.ts', 'test/domain/otp/service.test.ts'],
  },
  limits: {
    mutate: [
      'src/domain/limits/abuse-limits.ts',
      'src/domain/limits/rate-limiter.ts',
      'src/domain/limits/redis-rate-limiter.ts',
    ],
    tests: [
      'test/domain/limits/abuse-limits.test.ts',
      'test/domain/limits/rate-limiter.test.ts',
      'test/domain/otp/service.test.ts',
      'test/security/abuse.test.ts',
      'test/security/metering.test.ts',
    ],
  },
  pow: {
    mutate: ['src/domain/limits/pow.ts'],
    tests: ['test/domain/limits/pow-binding.test.ts', 'test/domain/limits/challenge.test.ts'],
  },
  // Being reworked (nested client budgets, velocity): run last, after that work lands.
  'client-network': {
    mutate: ['src/core/client-network.ts'],
    tests: ['test/core/client-network.test.ts', 'test/security/client-address.test.ts'],
  },
  challenge: {
    mutate: ['src/domain/limits/challenge.ts'],
    tests: [
      'test/domain/limits/challenge.test.ts',
      'test/domain/limits/challenge-signals.test.ts',
      'test/domain/limits/challenge-redeem.test.ts',
      'test/clients/captcha.test.ts',
      'test/security/challenge.test.ts',
      'test/security/challenge-journeys.test.ts',
    ],
  },
};

const name = process.env.MUTATE_MODULE ?? 'proofs';
const chosen = modules[name];
if (!chosen) throw new Error(`MUTATE_MODULE: no module ${name} (${Object.keys(modules).join(', ')})`);
// MUTATE_LINES=from-to mutates only those lines of each file, with a report of their own: a module
// too long for one sitting is run in parts that each finish (Stryker writes its report only at the end).
const lines = process.env.MUTATE_LINES;
if (lines !== undefined && !/^\d+-\d+$/.test(lines)) throw new Error(`MUTATE_LINES: from-to, not ${lines}`);
const report = lines ? `${name}.lines-${lines}` : name;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    configFile: 'jest.mutate.config.js',
    // MUTATE_TESTS (comma-separated) narrows a re-run of a few lines to the fast tests that reach them.
    config: { testMatch: (process.env.MUTATE_TESTS?.split(',') ?? chosen.tests).map((t) => `<rootDir>/${t}`) },
    enableFindRelatedTests: false,
  },
  checkers: process.env.MUTATE_NO_CHECK ? [] : ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  // The machine is shared: one test process at a time.
  concurrency: 1,
  mutate: lines ? chosen.mutate.map((file) => `${file}:${lines}`) : chosen.mutate,
  ignorePatterns: ['docs', 'bench', 'client/node_modules', 'reports', '.stryker-tmp', 'dist'],
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  // `--incremental` re-runs only the mutants whose code or covering tests changed, each module against its own last run.
  incrementalFile: `reports/mutation/${report}.incremental.json`,
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  timeoutMS: 30_000,
  cleanTempDir: 'always',
};
