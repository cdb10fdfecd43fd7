import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * `npm run bench -- --against <ref>`: the build of another commit, checked out beside this one,
 * so each case runs on both in the same run and their ratio cancels the machine (issue 36).
 * The base runs its own service child (its bench/service.ts, on its own src/ and node_modules):
 * that file is what fits its code, and what the runner asks of it (the service options as JSON,
 * the `{ url }` it announces, the `preissue`/`actions`/`profile-*` commands) is the contract
 * between runner and child that both builds keep. The harness (load, references, figures) is
 * this checkout's.
 */

/** The name `--against` resolves from bench/perf-base, not from git: a tag may not travel with a clone. */
export const PERF_BASE = 'perf-base';

export const REPO_ROOT = resolve(__dirname, '..');
export const PERF_BASE_FILE = join(__dirname, PERF_BASE);

/** The files of the base build the runner starts; a commit without them predates the bench's child protocol. */
export const BASE_SERVICE = 'bench/service.ts';
export const BASE_MEMORY = 'bench/memory.ts';

export class AgainstError extends Error {}

type Git = (args: string[]) => { ok: boolean; out: string };

const git =
  (cwd: string): Git =>
  (args) => {
    const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
    return { ok: !run.error && run.status === 0, out: `${run.stdout ?? ''}${run.stderr ?? ''}`.trim() };
  };

/** The commit id bench/perf-base holds: its first line that is not a comment. */
export function readPerfBase(text: string): string {
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
  if (!line || !/^[0-9a-f]{7,40}$/i.test(line))
    throw new AgainstError(
      `${PERF_BASE}: expected a commit id on its first line that is not a comment, found ${line ?? 'nothing'}`,
    );
  return line;
}

export interface ResolvedRef {
  /** What was asked (`perf-base`, a branch, a tag, a commit). */
  ref: string;
  commit: string;
}

/** `perf-base` through its file, anything else through git; the commit must be in this clone. */
export function resolveRef(ref: string, options: { git?: Git; perfBase?: () => string } = {}): ResolvedRef {
  const run = options.git ?? git(REPO_ROOT);
  const asked =
    ref === PERF_BASE ? readPerfBase((options.perfBase ?? (() => readFileSync(PERF_BASE_FILE, 'utf8')))()) : ref;
  const parsed = run(['rev-parse', '--verify', '--quiet', `${asked}^{commit}`]);
  if (!parsed.ok || !/^[0-9a-f]{40}$/.test(parsed.out)) {
    const hint =
      ref === PERF_BASE
        ? ` (${PERF_BASE} holds ${asked}; a shallow clone may lack it: git fetch --unshallow, or git fetch origin ${asked})`
        : '';
    throw new AgainstError(`--against ${ref}: no such commit in this clone${hint}`);
  }
  return { ref, commit: parsed.out };
}

/** Which build runs first in a round: they swap each round, as the one measured second reads 1-2% high (docs/performance.md). */
export type Build = 'base' | 'new';
export const pairOrder = (round: number): [Build, Build] => (round % 2 === 0 ? ['base', 'new'] : ['new', 'base']);

/** The key of a lock file's node_modules: its content, so any commit with the same lock reuses one install. */
export const lockKey = (lock: string | Buffer) => createHash('sha256').update(lock).digest('hex').slice(0, 16);

/** Where installs are kept between runs: node_modules/.cache, which every install already ignores. */
const DEPS_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'bench-builds');

export interface BaseBuild extends ResolvedRef {
  /** The base's checkout, with its node_modules linked in. */
  dir: string;
  /** How its node_modules came: this checkout's (same lock), a cached install, or a fresh `npm ci`. */
  deps: 'same lock as this checkout' | 'cached install' | 'npm ci';
  /** Removes the checkout (the cached install stays). */
  close(): void;
}

/**
 * The node_modules for `lock`: this checkout's own when the lock files are identical, else one
 * `npm ci` per lock file, kept in DEPS_CACHE under the lock's hash (a run that dies mid-install
 * leaves a `.partial` directory, never a half install under the key).
 */
function dependenciesFor(dir: string, say: (line: string) => void): { path: string; how: BaseBuild['deps'] } {
  const lock = readFileSync(join(dir, 'package-lock.json'));
  const ownLock = join(REPO_ROOT, 'package-lock.json');
  if (existsSync(ownLock) && lockKey(readFileSync(ownLock)) === lockKey(lock))
    return { path: join(REPO_ROOT, 'node_modules'), how: 'same lock as this checkout' };
  const target = join(DEPS_CACHE, lockKey(lock));
  if (existsSync(join(target, 'node_modules'))) return { path: join(target, 'node_modules'), how: 'cached install' };
  mkdirSync(DEPS_CACHE, { recursive: true });
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  copyFileSync(join(dir, 'package.json'), join(partial, 'package.json'));
  copyFileSync(join(dir, 'package-lock.json'), join(partial, 'package-lock.json'));
  say(`.. base: npm ci for its lock file ${lockKey(lock)} (once; kept in ${target})`);
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: partial,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (install.error || install.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new AgainstError(`npm ci for the base build failed (${install.error?.message ?? `exit ${install.status}`})`);
  }
  try {
    renameSync(partial, target);
  } catch {
    // Another run installed the same lock meanwhile: use its install.
    rmSync(partial, { recursive: true, force: true });
  }
  return { path: join(target, 'node_modules'), how: 'npm ci' };
}

/** Checks `commit` out in a temporary worktree (detached) with its dependencies, ready to start its service child. */
export function prepareBase(resolved: ResolvedRef, say: (line: string) => void = () => undefined): BaseBuild {
  const run = git(REPO_ROOT);
  const dir = mkdtempSync(join(tmpdir(), `bench-base-${resolved.commit.slice(0, 7)}-`));
  const added = run(['worktree', 'add', '--detach', dir, resolved.commit]);
  if (!added.ok) {
    rmSync(dir, { recursive: true, force: true });
    throw new AgainstError(`git worktree add for ${resolved.commit.slice(0, 7)} failed: ${added.out}`);
  }
  const close = () => {
    run(['worktree', 'remove', '--force', dir]);
    rmSync(dir, { recursive: true, force: true });
    run(['worktree', 'prune']);
  };
  try {
    if (!existsSync(join(dir, BASE_SERVICE)))
      throw new AgainstError(
        `${resolved.ref} (${resolved.commit.slice(0, 7)}) has no ${BASE_SERVICE}: it predates the bench's service child and cannot be measured against`,
      );
    const deps = dependenciesFor(dir, say);
    symlinkSync(deps.path, join(dir, 'node_modules'), 'dir');
    return { ...resolved, dir, deps: deps.how, close };
  } catch (err) {
    close();
    throw err;
  }
}
