const { join } = require('node:path');
const base = require('./jest.config');

/*
 * Jest as StrykerJS runs it (`npm run mutate`, stryker.config.mjs): the suite's configuration in
 * the runner's own process, where StrykerJS collects which test covers which mutant. The worker
 * memory limit (which makes Jest use a worker), the client build (no browser test is mutated
 * against) and the summary reporter are left out; the tests' environment is named by its path,
 * which StrykerJS wraps without resolving `<rootDir>`.
 */
const { workerIdleMemoryLimit: _worker, globalSetup: _build, reporters: _reporters, ...rest } = base;

module.exports = { ...rest, testEnvironment: join(__dirname, 'test', 'support', 'node-environment.js') };
