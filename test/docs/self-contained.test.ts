import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The repository explains itself: its contract is docs/contract.md, its decisions
 * docs/decisions.md. Nothing tracked may send a reader to documents outside it (the planning
 * documents it was built from, or the folder beside the checkout they lived in), which a user
 * of this repository does not have. The names are assembled here so this file does not match itself.
 */

const ROOT = join(__dirname, '..', '..');
// Upper-cased here, so that this file does not name them itself.
const planning = ['spec', 'design'].map((word) => word.toUpperCase());
const outside = [...planning, 'UPSTREAMS', 'STYLE'].map((name) => `${name}.md`);
const FORBIDDEN: Array<[string, RegExp]> = [
  [['..', 'shared'].join('/'), new RegExp(`\\.\\./${'shared'}\\b`)],
  ...outside.map((name): [string, RegExp] => [name, new RegExp(`\\b${name.replace('.', '\\.')}`)]),
  // The two planning documents by their bare upper-case names too; lower case is fine (jest's *.spec files).
  ...planning.map((word): [string, RegExp] => [word, new RegExp(`\\b${word}\\b`)]),
];

/** `path:line: text` of every tracked text file's line that names something outside the repository. */
function outsideReferences(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  expect(files.length).toBeGreaterThan(100);
  const found: string[] = [];
  for (const file of files) {
    const path = join(ROOT, file);
    if (!existsSync(path)) continue; // deleted in the working tree, not yet committed
    const content = readFileSync(path);
    if (content.includes(0)) continue; // binary
    content
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        const hit = FORBIDDEN.find(([, pattern]) => pattern.test(line));
        if (hit) found.push(`${file}:${i + 1}: ${hit[0]}: ${line.trim().slice(0, 120)}`);
      });
  }
  return found;
}

describe('the repository is self-contained', () => {
  it('finds the references it looks for', () => {
    const line = `see ${outside[0]} and ${['..', 'shared'].join('/')}/x, as ${planning[0]} says`;
    expect(FORBIDDEN.filter(([, pattern]) => pattern.test(line)).map(([name]) => name)).toEqual([
      ['..', 'shared'].join('/'),
      outside[0],
      planning[0],
    ]);
    expect(FORBIDDEN.some(([, pattern]) => pattern.test(`test/foo.spec.ts, ${planning[0]}IAL, design`))).toBe(false);
  });

  it('has no tracked file that points at documents outside the repository', () => {
    expect(outsideReferences()).toEqual([]);
  });
});
