import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import {
  AgainstError,
  BASE_SERVICE,
  PERF_BASE,
  PERF_BASE_FILE,
  REPO_ROOT,
  lockKey,
  pairOrder,
  prepareBase,
  readPerfBase,
  resolveRef,
} from '../../bench/against';
import { BASE_FLOORS } from '../../bench/base-floors';
import { BASELINE, CASES } from '../../bench/cases';
import type { LoadResult } from '../../bench/load';
import { parseOptions, UsageError } from '../../bench/options';
import { againstFigures, formatAgainst, tailFigures, verdict, type CaseOutcome, type Run } from '../../bench/report';
import { runBench, selectCases } from '../../bench/run';

/*
 * `npm run bench -- --against <ref>` (issue 36): the ref resolved (perf-base through its file),
 * the base checked out beside this one, each service case run on both builds in pairs whose
 * order swaps each round, and each build's own work and their ratio judged against
 * bench/base-floors.ts.
 */

const result = (overrides: Partial<LoadResult> = {}): LoadResult => ({
  kind: 'noop',
  requests: 100,
  failures: 0,
  rps: 100,
  p50: 1,
  p99: 2,
  durationSeconds: 1,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  mismatches: 0,
  nextIndex: 100,
  ...overrides,
});
const run = (micros: number, overrides: Partial<LoadResult> = {}): Run => ({
  result: result(overrides),
  cpu: { appMicrosPerRequest: micros, appCores: 1, loadCores: 1, otherCores: 0 },
});
const named = (name: string) => CASES.find((c) => c.name === name)!;

describe('bench --against options', () => {
  it('takes a ref, and no ref by default', () => {
    expect(parseOptions([]).against).toBeNull();
    expect(parseOptions(['--smoke', '--against', 'perf-base']).against).toBe('perf-base');
    expect(parseOptions(['--against=main', '--strict']).against).toBe('main');
  });

  it('refuses --against without a ref, or followed by another option', () => {
    expect(() => parseOptions(['--against'])).toThrow(UsageError);
    expect(() => parseOptions(['--against', '--strict'])).toThrow(/needs a git ref/);
  });
});

describe('bench --against ref', () => {
  const fakeGit = (known: Record<string, string>) => (args: string[]) => {
    const asked = args[args.length - 1]!.replace(/\^\{commit\}$/, '');
    return known[asked] ? { ok: true, out: known[asked]! } : { ok: false, out: '' };
  };
  const sha = 'a'.repeat(40);

  it('reads perf-base as a commit id in the repository, past its comment lines', () => {
    const text = readFileSync(PERF_BASE_FILE, 'utf8');
    expect(readPerfBase(text)).toMatch(/^[0-9a-f]{40}$/);
    expect(readPerfBase('# why\n\n  27147fd  \n')).toBe('27147fd');
    expect(() => readPerfBase('# only a comment\n')).toThrow(AgainstError);
    expect(() => readPerfBase('main\n')).toThrow(/expected a commit id/);
  });

  it('resolves perf-base through its file, not through a git ref of that name', () => {
    const git = fakeGit({ '27147fd': sha, [PERF_BASE]: 'b'.repeat(40) });
    expect(resolveRef(PERF_BASE, { git, perfBase: () => '27147fd\n' })).toEqual({ ref: PERF_BASE, commit: sha });
  });

  it('resolves any other ref through git, and says when a commit is not in this clone', () => {
    expect(resolveRef('main', { git: fakeGit({ main: sha }) })).toEqual({ ref: 'main', commit: sha });
    expect(() => resolveRef('nope', { git: fakeGit({}) })).toThrow(/--against nope: no such commit/);
    expect(() => resolveRef(PERF_BASE, { git: fakeGit({}), perfBase: () => '27147fd' })).toThrow(
      /holds 27147fd; a shallow clone may lack it/,
    );
  });

  it("finds perf-base's commit in this repository", () => {
    expect(resolveRef(PERF_BASE).commit).toMatch(/^27147fd[0-9a-f]{33}$/);
  });

  it('keys an install by its lock file content', () => {
    expect(lockKey('{"a":1}')).toBe(lockKey(Buffer.from('{"a":1}')));
    expect(lockKey('{"a":1}')).not.toBe(lockKey('{"a":2}'));
  });

  it("checks a commit out in a temporary worktree with this checkout's node_modules when the lock is the same, and removes it after", () => {
    const base = prepareBase(resolveRef('HEAD'));
    try {
      expect(existsSync(join(base.dir, BASE_SERVICE))).toBe(true);
      expect(lstatSync(join(base.dir, 'node_modules')).isSymbolicLink()).toBe(true);
      if (base.deps === 'same lock as this checkout')
        expect(realpathSync(join(base.dir, 'node_modules'))).toBe(realpathSync(join(REPO_ROOT, 'node_modules')));
    } finally {
      base.close();
    }
    expect(existsSync(base.dir)).toBe(false);
  });
});

describe('bench --against pairing', () => {
  it('swaps which build runs first each round: base, new, new, base, base, new', () => {
    expect([0, 1, 2].flatMap(pairOrder)).toEqual(['base', 'new', 'new', 'base', 'base', 'new']);
  });

  it('adds the upstream call reference to a selection with a case that calls upstream, so both builds have their own work', () => {
    const names = (cases: string[], withBase: boolean) => selectCases({ cases }, withBase).map((c) => c.name);
    expect(names(['get_user'], true)).toEqual(['ref_upstream_call', 'get_user']);
    expect(names(['get_user'], false)).toEqual(['get_user']);
    expect(names(['noop_action', 'verify_otp'], true)).toEqual(['noop_action', 'verify_otp']);
  });
});

describe('bench --against figures', () => {
  const refUpstream = named('ref_upstream_call');
  const getUser = named('get_user');
  const noop = named('noop_action');
  // Echo 40 µs, one upstream call 60 µs more: get_user's own work is its CPU less 100 µs.
  const outcomes = (mine: number[], theirs: number[], extra: Partial<CaseOutcome> = {}): CaseOutcome[] => [
    { benchCase: BASELINE, runs: [run(40)] },
    { benchCase: refUpstream, runs: [run(100)], paired: [run(90)] },
    {
      benchCase: getUser,
      runs: mine.map((m) => run(m)),
      paired: mine.map(() => run(90)),
      base: { runs: theirs.map((m) => run(m)) },
      ...extra,
    },
  ];

  it("reads each build's own work, their ratio per round and its median and spread, against the case's floor and target", () => {
    const [figures] = againstFigures(outcomes([200, 204, 196], [300, 300, 300]));
    expect(figures).toMatchObject({
      name: 'get_user',
      own_us_base: 200,
      own_us_new: 100,
      round_ratios: [0.5, 0.52, 0.48],
      ratio: 0.5,
      spread: 0.08,
      cpu_us_base: 300,
      cpu_us_new: 200,
    });
    expect(figures).toMatchObject({ floor: BASE_FLOORS.get_user!.floor, target: 0.5, result: 'ok', noisy: false });
  });

  it('judges a case over its floor, NOISY above 10%, and not at all in a smoke run', () => {
    expect(againstFigures(outcomes([330, 330, 330], [300, 300, 300]))[0]).toMatchObject({
      ratio: 1.15,
      result: 'over floor',
    });
    expect(againstFigures(outcomes([280, 300, 320], [300, 300, 300]))[0]).toMatchObject({
      ratio: 1,
      spread: 0.2,
      noisy: true,
    });
    expect(againstFigures(outcomes([330], [300]), false)[0]!.result).toBe('not judged');
  });

  it('holds only the cases that ran on both builds, and says when the base could not run one', () => {
    const skipped = outcomes([200], [], { base: { runs: [], skipped: 'FeLogin not registered in the base build' } });
    expect(againstFigures(skipped)).toEqual([
      expect.objectContaining({ name: 'get_user', result: 'skipped', ratio: null }),
    ]);
    expect(
      againstFigures([
        { benchCase: BASELINE, runs: [run(40)] },
        { benchCase: noop, runs: [run(60)], paired: [run(40)] },
      ]),
    ).toEqual([]);
  });

  it("fails the run when the base build's answers fail, naming the build", () => {
    const failing = outcomes([200], [300]);
    failing[2]!.base!.runs[0] = run(300, { failures: 3, non2xx: 3 });
    expect(againstFigures(failing)[0]!.result).toBe('failed');
    expect(verdict(failing).problems).toEqual([expect.stringContaining('get_user (base build): 3 failed')]);
  });

  it('prints both builds side by side with the ratio, floor and target', () => {
    expect(formatAgainst(againstFigures(outcomes([200, 204, 196], [300, 300, 300])))).toMatch(
      /get_user +200 +100 +0\.5 +8% +<= 1\.1 +0\.5 +300 -> 200 +2 -> 2 +ok$/m,
    );
  });
});

describe('bench --against run', () => {
  it("runs each service case on a fresh instance of each build, the base from its own checkout's service child, alternating", async () => {
    // This checkout stands in as the base: the runner starts its bench/service.ts from its directory, as it would another build's.
    const options = { ...parseOptions(['--smoke']), rounds: 2, duration: 0.5, connections: 5, cases: ['noop_action'] };
    const lines: string[] = [];
    const report = await runBench(options, (line) => lines.push(line), { dir: REPO_ROOT });
    expect(verdict(report.outcomes)).toEqual({ ok: true, problems: [] });
    expect(lines.filter((l) => l.includes('a fresh service instance'))).toEqual([
      '.. noop_action: a fresh service instance (memory, warn, noop action)',
      '.. noop_action: a fresh service instance (memory, warn, noop action) of the base build',
    ]);
    const order = lines.filter((l) => /^\.\. noop_action \[/.test(l)).map((l) => l.slice(3, l.indexOf(']') + 1));
    expect(order).toEqual(['noop_action [base]', 'noop_action [new]', 'noop_action [new]', 'noop_action [base]']);
    const noop = report.outcomes.find((o) => o.benchCase.name === 'noop_action')!;
    expect([noop.runs!.length, noop.base!.runs.length, noop.paired!.length]).toEqual([2, 2, 2]);
    expect(againstFigures(report.outcomes, false)).toEqual([
      expect.objectContaining({ name: 'noop_action', result: 'not judged', round_ratios: expect.any(Array) }),
    ]);
  }, 60_000);
});

describe('bench --against tail and pairs', () => {
  it('paces both builds at the lower of their saturating rates, alternating, and runs a setting pair on this build only', async () => {
    const options = {
      ...parseOptions(['--smoke']),
      rounds: 1,
      duration: 0.5,
      connections: 5,
      cases: ['login', 'otp_generate+challenge'],
    };
    const lines: string[] = [];
    const report = await runBench(options, (line) => lines.push(line), { dir: REPO_ROOT });
    expect(verdict(report.outcomes)).toEqual({ ok: true, problems: [] });
    const login = report.outcomes.find((o) => o.benchCase.name === 'login')!;
    const [mine, theirs] = [login.runs![0]!.result.rps, login.base!.runs[0]!.result.rps];
    expect(login.tail).toMatchObject({ saturating: { new: mine, base: theirs }, basis: Math.min(mine, theirs) });
    // Both builds offered the same rate at each load, the first of the pair as in the closed-loop rounds.
    expect(login.tail!.runs.map((r) => [r.load, r.build, r.rate])).toEqual(
      [0.5, 0.9].flatMap((load) =>
        (['base', 'new'] as const).map((build) => [
          load,
          build,
          Math.max(1, Math.round(Math.min(mine, theirs) * load)),
        ]),
      ),
    );
    expect(lines).toContain(
      ".. otp_generate+challenge: this build only (a setting's cost within one build; the base may not have the setting)",
    );
    expect(lines.some((l) => l.includes('otp_generate+challenge') && l.includes('of the base build'))).toBe(false);
    expect(againstFigures(report.outcomes, false).map((f) => f.name)).toEqual(['login']);
    const tail = tailFigures(report.outcomes, false)!;
    expect(tail.levels.map((l) => [l.load, typeof l.p99_ms_base, typeof l.p99_ms_new])).toEqual([
      [0.5, 'number', 'number'],
      [0.9, 'number', 'number'],
    ]);
  }, 90_000);
});
