/*
 * Jest global setup: the demo page loads the typed client from its build (client/dist, served
 * under /demo/client/), so the browser tests need it. Built here once per run, before any test
 * starts, when it is missing or older than its sources; a fresh clone's `npm test` builds it.
 */
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const SOURCES = join(ROOT, 'client', 'src');
const BUILT = join(ROOT, 'client', 'dist', 'index.js');

function stale() {
  if (!existsSync(BUILT)) return true;
  const built = statSync(BUILT).mtimeMs;
  const inputs = [...readdirSync(SOURCES).map((name) => join(SOURCES, name)), join(ROOT, 'client', 'tsconfig.json')];
  return inputs.some((file) => statSync(file).mtimeMs > built);
}

module.exports = async function buildClient() {
  if (!stale()) return;
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(ROOT, 'client', 'tsconfig.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
};
