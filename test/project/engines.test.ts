import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

/*
 * The Node versions package.json promises are ones every locked dependency accepts, so that
 * `npm ci` prints no EBADENGINE warning on any of them (and a dependency that drops a Node line
 * fails here, at the upgrade, not on a newcomer's machine).
 */

const ROOT = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: unknown } | unknown[] }>;
};

const declared = manifest.engines.node;

const demands = Object.entries(lock.packages)
  .filter(([path]) => path !== '')
  .flatMap(([path, entry]) => {
    const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
    return typeof range === 'string' ? [[path.replace(/^.*node_modules\//, ''), range] as const] : [];
  });

describe('engines', () => {
  it('declares a valid range that the Node running the tests satisfies', () => {
    expect(semver.validRange(declared)).not.toBeNull();
    expect(semver.satisfies(process.version, declared)).toBe(true);
  });

  it('is a range every locked dependency accepts whole', () => {
    expect(demands.length).toBeGreaterThan(100);
    expect(demands.filter(([, range]) => !semver.subset(declared, range))).toEqual([]);
  });

  it('would catch a dependency that asks for more (the check is not vacuous)', () => {
    expect(semver.subset(declared, '>=22.12.0')).toBe(false);
  });
});
