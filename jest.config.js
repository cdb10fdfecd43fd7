/** @type {import('jest').Config} */
module.exports = {
  // Jest's node environment that puts node:http back as it found it after each file (nock patches it).
  testEnvironment: '<rootDir>/test/support/node-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm run typecheck` (tsc --noEmit) checks types once for the whole tree.
  transform: {
    // The typed client (client/) is an ES module package: its sources run here as CommonJS like the rest.
    '/client/src/.+\\.ts$': '<rootDir>/test/support/transform-client.js',
    // The embedded database's CommonJS build loads Node's modules with import(): made requires for Jest.
    '/node_modules/@electric-sql/pglite/dist/.+\\.cjs$': '<rootDir>/test/support/transform-pglite.js',
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }],
  },
  // node_modules are not transformed, but for PGlite's build (above).
  transformIgnorePatterns: ['/node_modules/(?!@electric-sql/pglite/)'],
  // ES module sources import their siblings as `./name.js` (the client's); the .ts file answers.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // The typed client's build, which the demo page loads (browser tests), made when missing or stale.
  globalSetup: '<rootDir>/test/support/build-client.js',
  // Servers started by tests (SMTP, Redis, sandbox) must be closed by the tests; this catches leaks loudly.
  testTimeout: 20000,
  // With one worker Jest would run every file in band, in its own process, whose heap then grows with each
  // file's modules (browsers, clusters, the app) until V8 gives up (seen at ~80 files, 4 GB).
  // A memory limit makes Jest use a worker and start a fresh one once it holds more than this.
  workerIdleMemoryLimit: '1GB',
  // A worker per core: most files wait on real servers (Redis, SMTP, browsers), not on a core, so two
  // workers on two cores took the suite from 17 to under 12 minutes. Two builds' paced runs are the
  // exception (test/bench/against.test.ts) and run alone after the rest (scripts/test.sh).
  maxWorkers: '100%',
  testSequencer: '<rootDir>/test/support/slow-first-sequencer.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
