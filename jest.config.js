/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm run typecheck` (tsc --noEmit) checks types once for the whole tree.
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  // Servers started by tests (SMTP, Redis, sandbox) must be closed by the tests; this catches leaks loudly.
  testTimeout: 20000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
