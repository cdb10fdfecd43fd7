import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The flow runner steps XState machines through more than XState's documented API (a hand-built
 * actor scope, `machine.microstep`, synthesised `xstate.done.actor.*` events; machines/macrostep.ts
 * says which and what would replace them). A minor release may change any of it, so XState is
 * pinned to one exact version, the one locked and installed: an upgrade is a deliberate edit that
 * test/machines/macrostep.test.ts then checks, never a `npm install` that drifts into one.
 */

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, unknown>;

describe('XState is pinned', () => {
  const manifest = read('package.json') as { dependencies: Record<string, string> };
  const lock = read('package-lock.json') as {
    packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
  };

  it('to one exact version in package.json', () => {
    expect(manifest.dependencies.xstate).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('that the lock and the installed package agree on', () => {
    const pinned = manifest.dependencies.xstate;
    expect(lock.packages['']!.dependencies!.xstate).toBe(pinned);
    expect(lock.packages['node_modules/xstate']!.version).toBe(pinned);
    expect((read('node_modules/xstate/package.json') as { version: string }).version).toBe(pinned);
  });
});
