import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Every repository path a reader is sent to exists. Scanned: README.md, CHANGELOG.md and
 * docs/*.md whole, and the comments of the code under src/, machines/, scripts/, bench/, test/
 * and client/src/. A path is a
 * word that starts at one of the repository's top folders and ends in a file extension or a
 * trailing slash (`src/http/app.ts`, `test/support/`). Skipped, by two rules: a path holding a
 * glob or a placeholder (`*`, `<name>`, `{a,b}`, `$VAR`, `...`) names a family, not a file; and a
 * path git ignores (.gitignore: `client/dist/`, `*.tgz`) is what a build writes, not a checkout holds.
 */

const ROOT = join(__dirname, '..', '..');
const TOP = ['src', 'test', 'docs', 'machines', 'scripts', 'ops', 'bench', 'client', 'templates', '.ci'];
const CODE_ROOTS = ['src/', 'machines/', 'scripts/', 'bench/', 'test/', 'client/src/'];
const CODE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;

// A candidate runs from a top folder (not inside a longer word or path) over path characters and
// placeholder characters, so that a placeholder stays inside the candidate and marks it skipped.
const CANDIDATE = new RegExp(
  `(?<![\\w./@~-])((?:${TOP.map((t) => t.replace('.', '\\.')).join('|')})/[\\w./*<>{}$-]*)`,
  'g',
);
const PLACEHOLDER = /[*<>{}$]|\.\.\./;

/** The repository paths a line names, placeholders and families left out. */
export function pathsIn(line: string): string[] {
  const found: string[] = [];
  for (const match of line.matchAll(CANDIDATE)) {
    let path = match[1]!;
    if (PLACEHOLDER.test(path)) continue;
    path = path.replace(/[.,]+$/, ''); // the end of a sentence, not of the path
    if (/\.[A-Za-z0-9]{1,6}$/.test(path) || path.endsWith('/')) found.push(path);
  }
  return found;
}

/** The comment text of one line of code: after `//`, or a line inside a block comment. */
function commentOf(line: string, inBlock: boolean): { text: string; inBlock: boolean } {
  const trimmed = line.trim();
  if (inBlock) {
    const end = trimmed.indexOf('*/');
    return end < 0 ? { text: trimmed, inBlock: true } : { text: trimmed.slice(0, end), inBlock: false };
  }
  const open = line.indexOf('/*');
  const slashes = line.search(/(^|[^:'"`\\])\/\//);
  if (open >= 0 && (slashes < 0 || open < slashes)) {
    const rest = line.slice(open + 2);
    const end = rest.indexOf('*/');
    return end < 0
      ? { text: rest, inBlock: true }
      : { text: rest.slice(0, end) + ' ' + commentOf(rest.slice(end + 2), false).text, inBlock: false };
  }
  return { text: slashes >= 0 ? line.slice(slashes + 2) : '', inBlock: false };
}

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
}

/** `file:line: path` for every path named that does not exist. */
function missingPaths(): string[] {
  const files = trackedFiles().filter((file) => existsSync(join(ROOT, file)));
  const docs = files.filter(
    (file) => file === 'README.md' || file === 'CHANGELOG.md' || /^docs\/[^/]+\.md$/.test(file),
  );
  const code = files.filter((file) => CODE.test(file) && CODE_ROOTS.some((root) => file.startsWith(root)));
  expect(docs.length).toBeGreaterThan(10);
  expect(code.length).toBeGreaterThan(300);
  const missing: string[] = [];
  const check = (file: string, n: number, text: string): void => {
    for (const path of pathsIn(text)) if (!existsSync(join(ROOT, path))) missing.push(`${file}:${n}: ${path}`);
  };
  for (const file of docs)
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => check(file, i + 1, line));
  for (const file of code) {
    let inBlock = false;
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const comment = commentOf(line, inBlock);
        inBlock = comment.inBlock;
        check(file, i + 1, comment.text);
      });
  }
  return missing.filter((entry) => !ignoredByGit(entry.slice(entry.lastIndexOf(' ') + 1)));
}

function ignoredByGit(path: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', '--no-index', path], { cwd: ROOT });
    return true;
  } catch {
    return false;
  }
}

describe('paths named in docs and comments', () => {
  it('finds paths and skips families by the stated rule', () => {
    expect(pathsIn('see src/http/app.ts, test/support/ and docs/otp.md.')).toEqual([
      'src/http/app.ts',
      'test/support/',
      'docs/otp.md',
    ]);
    expect(pathsIn('docs/journeys/*.svg, docs/bench-<n>.json, src/{a,b}.ts, scripts/$NAME.ts')).toEqual([]);
    expect(pathsIn('the src folder, node_modules/xstate/src/x.ts, a/src/b.ts, src/http')).toEqual([]);
    expect(commentOf('const x = 1; // see src/http/app.ts', false).text).toContain('src/http/app.ts');
    expect(commentOf("const url = 'http://src/a.ts';", false).text).toBe('');
  });

  it('names no path that does not exist', () => {
    expect(missingPaths()).toEqual([]);
  });
});
