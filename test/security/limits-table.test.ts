import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionsByName } from '../../src/actions';

/*
 * docs/security.md "Limits per action" names what meters every action: an action added without
 * a row there fails here, so nothing reaches production unmetered by oversight.
 */

const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
const section = doc.slice(
  doc.indexOf('## Limits per action'),
  doc.indexOf('\n## ', doc.indexOf('## Limits per action') + 1),
);
const rows = new Map(
  [...section.matchAll(/^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [
    m[1]!,
    { needs: m[2]!.trim(), meteredBy: m[3]!.trim() },
  ]),
);

describe('docs/security.md, limits per action', () => {
  it.each([...actionsByName.keys()])('has a row for %s saying what it needs and what meters it', (action) => {
    const row = rows.get(action);
    expect(row).toBeDefined();
    expect(row!.needs).not.toBe('');
    expect(row!.meteredBy).not.toBe('');
  });

  it('has no row for an action that does not exist', () => {
    expect([...rows.keys()].filter((name) => !actionsByName.has(name))).toEqual([]);
  });
});
