import { BASE_FLOORS, BASE_NOISY_SPREAD } from './base-floors';
import type { Build } from './against';
import {
  MEMORY_TARGET_BYTES,
  NOISY_SPREAD,
  REFERENCE_NAMES,
  TAIL_LOADS,
  TAIL_NOISY_SPREAD,
  TAIL_P99_FLOOR,
  TAIL_P99_SLACK_MS,
  type BenchCase,
  type RatioTo,
} from './cases';
import type { CpuUse } from './cpu';
import type { LoadResult } from './load';
import type { MemoryResult } from './memory';

/* The table `npm run bench` prints, its JSON, and the verdicts CI and `--strict` rely on. */

/** One measured window of one app. */
export interface Run {
  result: LoadResult;
  /** CPU used during the window (Linux only). */
  cpu?: CpuUse;
}

export interface CaseOutcome {
  benchCase: BenchCase;
  /** Its measured windows, one per round. */
  runs?: Run[];
  /** The reference's window right before each of them (same index); absent for the references themselves. */
  paired?: Run[];
  /** Why the case did not run (an action not registered, no redis-server). */
  skipped?: string;
  /** With --against: the same case on the base build, its runs in round order (each round's pair ran back to back). */
  base?: { runs: Run[]; skipped?: string };
  /** The tail-latency runs (TAIL_CASE only): paced at shares of the saturating rate, after the closed-loop rounds. */
  tail?: TailOutcome;
}

/** One paced run of the tail figure. */
export interface TailRun {
  /** The share of the saturating rate offered (0.5, 0.9). */
  load: number;
  /** Requests per second offered on an even arrival schedule, open loop (bench/pacer.ts). */
  rate: number;
  build: Build;
  result: LoadResult;
}

export interface TailOutcome {
  /** The closed-loop answers per second of each build (median of its rounds): what it reaches with the bench's connections. */
  saturating: { new: number; base?: number };
  /** What the paced rates are shares of: the lower of the two, so both builds are offered the same load. */
  basis: number;
  runs: TailRun[];
}

export interface Verdict {
  ok: boolean;
  problems: string[];
}

type CaseResult = 'ok' | 'over floor' | 'failed' | 'skipped' | 'not judged' | 'reference';

/** One case as `--json` writes it, and as the table shows it. */
export interface CaseFigures {
  name: string;
  store: string | null;
  log: string | null;
  req_per_s: number | null;
  cpu_us_per_answer: number | null;
  /** App CPU per answer over the baseline's (median of all its runs), the figure of earlier runs. */
  multiple: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  /** App CPU per answer over its paired reference's, median of the rounds. */
  ratio: number | null;
  ratio_to: RatioTo | null;
  /** (largest - smallest) / median of the rounds' ratios; 0 with one round. */
  spread: number | null;
  /** Each round's ratio, in the order they ran: what a NOISY spread is made of. */
  round_ratios: number[];
  /** µs per answer of each reference in this run (and of the echo); the paired one from this case's own rounds. */
  references: Record<(typeof REFERENCE_NAMES)[number] | 'baseline', number | null> &
    Partial<Record<RatioTo, number | null>>;
  /**
   * The service's own work per answer, µs: the case's CPU less the echo's and, per upstream call
   * it makes, less what one call through the service's client adds to the echo
   * (`ref_upstream_call` - echo). What remains is the pipeline, the action, the machines, the
   * stores and the client's handling of the reply: the part no transport choice changes.
   */
  own_us: number | null;
  /** The most the ratio may be (for `+info`: the most it may exceed its case's ratio). */
  floor: number | null;
  result: CaseResult;
  noisy: boolean;
}

const round = (value: number | undefined | null, digits: number): number | null =>
  value === undefined || value === null || !Number.isFinite(value) ? null : Number(value.toFixed(digits));

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** How far a set of ratios disagree: their range over their median. */
export function spreadOf(values: readonly number[]): number | undefined {
  const middle = median(values);
  return middle ? (Math.max(...values) - Math.min(...values)) / middle : undefined;
}

const cpuOf = (run: Run) => run.cpu?.appMicrosPerRequest ?? undefined;
const defined = (values: Array<number | undefined | null>) =>
  values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
const medianCpu = (runs: readonly Run[] | undefined) => median(defined((runs ?? []).map(cpuOf)));

/** Each round's ratio: the case's CPU per answer over its reference's, measured right before it. */
function roundRatios(outcome: CaseOutcome): number[] {
  const { runs = [], paired = [] } = outcome;
  return defined(
    runs.map((run, i) => {
      const own = cpuOf(run);
      const reference = paired[i] && cpuOf(paired[i]!);
      return own && reference ? own / reference : undefined;
    }),
  );
}

/** Every run of a name in the bench (a reference runs once per round of each case paired with it). */
function allRuns(outcomes: readonly CaseOutcome[], name: string): Run[] {
  // A set: a smoke run pairs every case with the same run of its reference.
  const runs = new Set<Run>();
  for (const outcome of outcomes) {
    if (outcome.benchCase.name === name) for (const run of outcome.runs ?? []) runs.add(run);
    if (outcome.benchCase.ratioTo === name) for (const run of outcome.paired ?? []) runs.add(run);
  }
  return [...runs];
}

/** The baseline's app CPU per answer: the median of its runs. */
function baselineCpu(outcomes: readonly CaseOutcome[]): number | undefined {
  return medianCpu(allRuns(outcomes, 'baseline'));
}

const failed = (runs: readonly Run[] | undefined) =>
  (runs ?? []).some((r) => r.result.failures > 0 || r.result.exhausted);
const isJudgedCase = (outcome: CaseOutcome) => Boolean(outcome.benchCase.ratioTo);

/** Every case judged against its floor; `judge` false (smoke: cold, a second each) leaves them unjudged. */
export function caseFigures(outcomes: readonly CaseOutcome[], judge = true): CaseFigures[] {
  const baseline = baselineCpu(outcomes);
  const ratios = new Map(outcomes.map((o) => [o.benchCase.name, median(roundRatios(o))]));
  const named = [...REFERENCE_NAMES, 'baseline'] as const;
  const runMedians = Object.fromEntries(named.map((name) => [name, medianCpu(allRuns(outcomes, name))]));
  return outcomes.filter(isJudgedCase).map((outcome) => {
    const { benchCase, runs } = outcome;
    const ratio = ratios.get(benchCase.name);
    const spread = spreadOf(roundRatios(outcome));
    const base = benchCase.relativeTo ? ratios.get(benchCase.relativeTo) : 1;
    const judged = ratio !== undefined && base ? ratio / base : undefined;
    let verdict: CaseResult = 'not judged';
    if (!runs || runs.length === 0) verdict = 'skipped';
    else if (failed(runs)) verdict = 'failed';
    else if (benchCase.floor === undefined) verdict = 'reference';
    else if (judge && judged !== undefined) verdict = judged <= benchCase.floor ? 'ok' : 'over floor';
    const cpu = medianCpu(runs);
    const own = ownWork(outcomes)(benchCase, cpu);
    const names: readonly string[] =
      benchCase.ratioTo && !(named as readonly string[]).includes(benchCase.ratioTo)
        ? [...named, benchCase.ratioTo]
        : named;
    const references = Object.fromEntries(
      names.map((name) => [
        name,
        round(
          name === benchCase.ratioTo
            ? medianCpu(outcome.paired)
            : name === benchCase.name
              ? cpu
              : runMedians[name as (typeof named)[number]],
          1,
        ),
      ]),
    ) as CaseFigures['references'];
    return {
      name: benchCase.name,
      store: benchCase.service?.store ?? null,
      log: benchCase.service?.logLevel ?? null,
      req_per_s: round(median((runs ?? []).map((r) => r.result.rps)), 0),
      cpu_us_per_answer: round(cpu, 1),
      multiple: round(cpu && baseline ? cpu / baseline : undefined, 2),
      p50_ms: round(median((runs ?? []).map((r) => r.result.p50)), 2),
      p99_ms: round(median((runs ?? []).map((r) => r.result.p99)), 2),
      ratio: round(ratio, 2),
      ratio_to: benchCase.ratioTo ?? null,
      spread: round(spread, 3),
      round_ratios: roundRatios(outcome).map((r) => round(r, 3)!),
      references,
      own_us: round(own, 1),
      floor: benchCase.floor ?? null,
      result: verdict,
      noisy: spread !== undefined && spread > NOISY_SPREAD,
    };
  });
}

/**
 * The service's own work per answer, µs, of a case's CPU per answer: less the echo and, per
 * upstream call, less what one call through the service's client adds to the echo (medians of
 * this run's references). Undefined for a reference app, or when a reference it needs did not run.
 */
function ownWork(
  outcomes: readonly CaseOutcome[],
): (benchCase: BenchCase, cpu: number | undefined) => number | undefined {
  const baseline = baselineCpu(outcomes);
  const upstreamCall = medianCpu(allRuns(outcomes, 'ref_upstream_call'));
  const perCall = upstreamCall !== undefined && baseline !== undefined ? upstreamCall - baseline : undefined;
  return (benchCase, cpu) => {
    const calls = benchCase.service ? benchCase.upstreamCalls : undefined;
    if (cpu === undefined || baseline === undefined || calls === undefined || (calls > 0 && perCall === undefined))
      return undefined;
    return cpu - baseline - calls * (perCall ?? 0);
  };
}

/** One service case on both builds of an --against run, as the table shows it and `--json` writes it (`against.cases`). */
export interface AgainstFigures {
  name: string;
  /** Own µs per answer (ownWork), median of the rounds, of the base build and of this one. */
  own_us_base: number | null;
  own_us_new: number | null;
  /** This build's own µs over the base's, median of the rounds' ratios (each round's pair ran back to back). */
  ratio: number | null;
  /** (largest - smallest) / median of the rounds' ratios; NOISY above BASE_NOISY_SPREAD. */
  spread: number | null;
  round_ratios: number[];
  cpu_us_base: number | null;
  cpu_us_new: number | null;
  req_per_s_base: number | null;
  req_per_s_new: number | null;
  p99_ms_base: number | null;
  p99_ms_new: number | null;
  /** The most the ratio may be today (bench/base-floors.ts), and issue 36's aim where it sets one. */
  floor: number | null;
  target: number | null;
  result: CaseResult;
  noisy: boolean;
}

/** Every case that ran on the base build too, its own work on each build and their ratio, judged against bench/base-floors.ts. */
export function againstFigures(outcomes: readonly CaseOutcome[], judge = true): AgainstFigures[] {
  const own = ownWork(outcomes);
  return outcomes.flatMap((outcome) => {
    const { benchCase, runs = [], base } = outcome;
    if (!base) return [];
    const ownOf = (run: Run | undefined) => (run ? own(benchCase, cpuOf(run)) : undefined);
    const ratios = defined(
      runs.map((run, i) => {
        const mine = ownOf(run);
        const theirs = ownOf(base.runs[i]);
        return mine !== undefined && theirs !== undefined && theirs > 0 ? mine / theirs : undefined;
      }),
    );
    const ratio = median(ratios);
    const spread = spreadOf(ratios);
    const { floor, target } = BASE_FLOORS[benchCase.name] ?? {};
    let result: CaseResult = 'not judged';
    if (base.skipped || base.runs.length === 0 || runs.length === 0) result = 'skipped';
    else if (failed(runs) || failed(base.runs)) result = 'failed';
    else if (judge && ratio !== undefined && floor !== undefined) result = ratio <= floor ? 'ok' : 'over floor';
    return [
      {
        name: benchCase.name,
        own_us_base: round(median(defined(base.runs.map(ownOf))), 1),
        own_us_new: round(median(defined(runs.map(ownOf))), 1),
        ratio: round(ratio, 2),
        spread: round(spread, 3),
        round_ratios: ratios.map((r) => round(r, 3)!),
        cpu_us_base: round(medianCpu(base.runs), 1),
        cpu_us_new: round(medianCpu(runs), 1),
        req_per_s_base: round(median(base.runs.map((r) => r.result.rps)), 0),
        req_per_s_new: round(median(runs.map((r) => r.result.rps)), 0),
        p99_ms_base: round(median(base.runs.map((r) => r.result.p99)), 2),
        p99_ms_new: round(median(runs.map((r) => r.result.p99)), 2),
        floor: floor ?? null,
        target: target ?? null,
        result,
        noisy: spread !== undefined && spread > BASE_NOISY_SPREAD,
      },
    ];
  });
}

/** The printed table of an --against run. */
export function formatAgainst(figures: readonly AgainstFigures[]): string {
  const rows = figures.map((f) => {
    const result = f.noisy ? `${f.result} NOISY` : f.result;
    return [
      f.name,
      cell(round(f.own_us_base, 0)),
      cell(round(f.own_us_new, 0)),
      cell(f.ratio),
      percent(f.spread),
      f.floor === null ? '' : `<= ${f.floor}`,
      f.target === null ? '' : `${f.target}`,
      `${cell(round(f.cpu_us_base, 0))} -> ${cell(round(f.cpu_us_new, 0))}`,
      `${cell(f.p99_ms_base)} -> ${cell(f.p99_ms_new)}`,
      result,
    ];
  });
  return table(
    ['case', 'base own µs', 'new own µs', 'ratio', 'spread', 'floor', 'target', 'app CPU µs', 'p99 ms', 'result'],
    rows,
    1,
  );
}

export const AGAINST_LEGEND = [
  "base / new own µs: each build's own work per answer (the case's app CPU less the echo and its upstream calls, both read against this run's references), median of the rounds;",
  `ratio: new over base, median of the rounds' ratios, each round's two runs back to back, the first of the pair swapping each round; spread as above, NOISY above ${BASE_NOISY_SPREAD * 100}%;`,
  "floor: the most the ratio may be today (bench/base-floors.ts); target: issue 36's aim, not yet met.",
].join('\n');

/** One load level of the tail figure, as the table shows it and `--json` writes it (`tail.levels`). */
interface TailLevelFigures {
  /** The share of the saturating rate offered, and that rate in answers per second. */
  load: number;
  rate: number;
  /** Answers per second each build did answer (the pacer's rate, unless a build could not keep up). */
  req_per_s_base: number | null;
  req_per_s_new: number | null;
  /** Medians of the rounds, ms (autocannon's histogram counts whole milliseconds). */
  p50_ms_base: number | null;
  p50_ms_new: number | null;
  p99_ms_base: number | null;
  p99_ms_new: number | null;
  /** The new build's p99 over the base's, median of the rounds' ratios (each round's two runs back to back), with their spread. */
  p99_ratio: number | null;
  spread: number | null;
  round_p99_ratios: number[];
  /** Judged at 90% only, and only against a base build (TAIL_P99_FLOOR). */
  result: CaseResult;
  noisy: boolean;
}

export interface TailFigures {
  case: string;
  saturating_req_per_s_new: number | null;
  saturating_req_per_s_base: number | null;
  /** The rate the levels are shares of (the lower of the two). */
  basis_req_per_s: number | null;
  levels: TailLevelFigures[];
  /** The rule at 90%: ratio at most `floor`, or the two p99s at most `slack_ms` apart; NOISY above `noisy_spread`. */
  floor: number;
  slack_ms: number;
  noisy_spread: number;
  result: CaseResult;
}

/** The judged level: p99 at 90% of the saturating rate must not get worse (issue 36). */
const TAIL_JUDGED_LOAD = TAIL_LOADS[TAIL_LOADS.length - 1]!;

/** The tail figure of a run, or undefined when its case did not run paced. */
export function tailFigures(outcomes: readonly CaseOutcome[], judge = true): TailFigures | undefined {
  const outcome = outcomes.find((o) => o.tail);
  if (!outcome?.tail) return undefined;
  const { tail } = outcome;
  const levels = [...new Set(tail.runs.map((r) => r.load))].map((load): TailLevelFigures => {
    const at = tail.runs.filter((r) => r.load === load);
    const of = (build: Build) => at.filter((r) => r.build === build).map((r) => r.result);
    const [mine, theirs] = [of('new'), of('base')];
    // Each round's two runs are the i-th of each build.
    const ratios = defined(mine.map((r, i) => (theirs[i] && theirs[i]!.p99 > 0 ? r.p99 / theirs[i]!.p99 : undefined)));
    const ratio = median(ratios);
    const spread = spreadOf(ratios);
    const p99 = (results: LoadResult[]) => median(results.map((r) => r.p99));
    let result: CaseResult = 'not judged';
    if (at.some((r) => r.result.failures > 0)) result = 'failed';
    else if (judge && load === TAIL_JUDGED_LOAD && theirs.length > 0 && ratio !== undefined) {
      const apart = p99(mine)! - p99(theirs)!;
      result = ratio <= TAIL_P99_FLOOR || apart <= TAIL_P99_SLACK_MS ? 'ok' : 'over floor';
    }
    return {
      load,
      rate: at[0]!.rate,
      req_per_s_base: round(median(theirs.map((r) => r.rps)), 0),
      req_per_s_new: round(median(mine.map((r) => r.rps)), 0),
      p50_ms_base: round(median(theirs.map((r) => r.p50)), 2),
      p50_ms_new: round(median(mine.map((r) => r.p50)), 2),
      p99_ms_base: round(p99(theirs), 2),
      p99_ms_new: round(p99(mine), 2),
      p99_ratio: round(ratio, 2),
      spread: round(spread, 3),
      round_p99_ratios: ratios.map((r) => round(r, 3)!),
      result,
      noisy: spread !== undefined && spread > TAIL_NOISY_SPREAD,
    };
  });
  const judged = levels.find((l) => l.load === TAIL_JUDGED_LOAD);
  const failedLevel = levels.some((l) => l.result === 'failed');
  return {
    case: outcome.benchCase.name,
    saturating_req_per_s_new: round(tail.saturating.new, 0),
    saturating_req_per_s_base: round(tail.saturating.base, 0),
    basis_req_per_s: round(tail.basis, 0),
    levels,
    floor: TAIL_P99_FLOOR,
    slack_ms: TAIL_P99_SLACK_MS,
    noisy_spread: TAIL_NOISY_SPREAD,
    result: failedLevel ? 'failed' : (judged?.result ?? 'not judged'),
  };
}

/** The printed tail table. */
export function formatTail(figures: TailFigures): string {
  const pair = (base: number | null, mine: number | null) =>
    base === null ? cell(mine) : `${cell(base)} -> ${cell(mine)}`;
  const rows = figures.levels.map((l) => [
    `${Math.round(l.load * 100)}%`,
    cell(l.rate),
    pair(l.req_per_s_base, l.req_per_s_new),
    pair(l.p50_ms_base, l.p50_ms_new),
    pair(l.p99_ms_base, l.p99_ms_new),
    cell(l.p99_ratio),
    percent(l.spread),
    l.load === TAIL_JUDGED_LOAD ? `<= ${figures.floor} or ${figures.slack_ms} ms` : '',
    l.noisy ? `${l.result} NOISY` : l.result,
  ]);
  const saturating =
    figures.saturating_req_per_s_base === null
      ? `${cell(figures.saturating_req_per_s_new)} req/s`
      : `base ${cell(figures.saturating_req_per_s_base)}, new ${cell(figures.saturating_req_per_s_new)} req/s; the lower is the basis`;
  return [
    `tail latency, ${figures.case}: paced at shares of the saturating rate (closed loop: ${saturating})`,
    table(
      ['load', 'offered req/s', 'answered req/s', 'p50 ms', 'p99 ms', 'p99 ratio', 'spread', 'floor', 'result'],
      rows,
      1,
    ),
  ].join('\n');
}

export const TAIL_LEGEND = [
  'tail: the case paced open loop (a journey started every 1 / rate s, answered or not; latency from when each request was due) at each share of the saturating rate, both builds offered the same rate, alternating;',
  `p50/p99: base -> new, medians of the rounds; p99 ratio: new over base, median of the rounds' ratios, NOISY above ${TAIL_NOISY_SPREAD * 100}%; judged at ${TAIL_JUDGED_LOAD * 100}% only, with a base build.`,
].join('\n');

/** The references themselves (the bare echo and node:http call are never judged; the others are cases too). */
function referenceFigures(outcomes: readonly CaseOutcome[]) {
  const baseline = baselineCpu(outcomes);
  return REFERENCE_NAMES.flatMap((name) => {
    const runs = allRuns(outcomes, name);
    if (runs.length === 0) return [];
    const cpu = medianCpu(runs);
    return [
      {
        name,
        runs: runs.length,
        req_per_s: round(median(runs.map((r) => r.result.rps)), 0),
        cpu_us_per_answer: round(cpu, 1),
        multiple: round(cpu && baseline ? cpu / baseline : undefined, 2),
        p50_ms: round(median(runs.map((r) => r.result.p50)), 2),
        p99_ms: round(median(runs.map((r) => r.result.p99)), 2),
        result: failed(runs) ? ('failed' as const) : ('reference' as const),
      },
    ];
  });
}

/** What `--json <file>` writes. */
export function jsonReport(outcomes: readonly CaseOutcome[], memory: MemoryResult | undefined, judge: boolean) {
  const baselineRuns = allRuns(outcomes, 'baseline');
  return {
    baseline: {
      req_per_s: round(median(baselineRuns.map((r) => r.result.rps)), 0),
      cpu_us_per_answer: round(baselineCpu(outcomes), 1),
      runs: baselineRuns.length,
    },
    cases: caseFigures(outcomes, judge),
    references: referenceFigures(outcomes),
    memory_bytes_per_code: memory ? round(memory.bytesPerRecord, 1) : null,
    ...(memory?.bytesPerSpentChallenge === undefined
      ? {}
      : { memory_bytes_per_answered_passkey_challenge: round(memory.bytesPerSpentChallenge, 1) }),
    memory_floor_bytes: MEMORY_TARGET_BYTES,
    tail: tailFigures(outcomes, judge) ?? null,
  };
}

function table(header: string[], rows: string[][], leftColumns = 2): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const cell = (value: number | null) => (value === null ? '-' : String(value));
const percent = (value: number | null) => (value === null ? '-' : `${(value * 100).toFixed(0)}%`);
const SHORT: Record<RatioTo, string> = {
  ref_node_http_call: 'node:http',
  baseline: 'echo',
  'login-funnel-off': 'funnel off',
  'otp_generate-challenge-off': 'challenge off',
  'login-tracing-off': 'tracing off',
};

/** The printed table: each case's ratio to its paired reference, its spread, beside its floor. */
export function formatTable(outcomes: readonly CaseOutcome[], judge = true): string {
  const rows = referenceFigures(outcomes)
    .filter((r) => r.name === 'ref_node_http_call')
    .map((r) => [
      r.name,
      '-',
      cell(r.req_per_s),
      cell(round(r.p50_ms, 1)),
      cell(round(r.p99_ms, 1)),
      cell(round(r.cpu_us_per_answer, 0)),
      '-',
      '',
      '',
      '',
      '',
      '',
      `reference (${r.runs} runs)`,
    ]);
  const baselineRuns = allRuns(outcomes, 'baseline');
  if (baselineRuns.length > 0) {
    const cpu = baselineCpu(outcomes);
    rows.unshift([
      'baseline',
      '-',
      cell(round(median(baselineRuns.map((r) => r.result.rps)), 0)),
      cell(round(median(baselineRuns.map((r) => r.result.p50)), 1)),
      cell(round(median(baselineRuns.map((r) => r.result.p99)), 1)),
      cell(round(cpu, 0)),
      '-',
      '',
      '',
      '',
      '',
      '',
      `reference (${baselineRuns.length} runs)`,
    ]);
  }
  for (const figures of caseFigures(outcomes, judge)) {
    const outcome = outcomes.find((o) => o.benchCase.name === figures.name)!;
    const floor =
      figures.floor === null
        ? ''
        : outcome.benchCase.relativeTo
          ? `x${figures.floor} of ${outcome.benchCase.relativeTo}`
          : `<= ${figures.floor}`;
    const last = outcome.runs?.find((r) => r.result.failures > 0 || r.result.exhausted)?.result;
    let result: string = figures.result;
    if (figures.result === 'skipped') result = `skipped: ${outcome.skipped ?? 'not run'}`;
    else if (figures.result === 'failed' && last)
      result = `${last.failures} failed${last.exhausted ? ' (ran out of pre-issued codes)' : ''}`;
    if (figures.noisy) result += ' NOISY';
    const paired = figures.ratio_to ? figures.references[figures.ratio_to] : null;
    rows.push([
      figures.name,
      figures.store ? `${figures.store}, ${figures.log}` : '-',
      cell(figures.req_per_s),
      cell(round(figures.p50_ms, 1)),
      cell(round(figures.p99_ms, 1)),
      cell(round(figures.cpu_us_per_answer, 0)),
      figures.ratio_to ? `${cell(round(paired, 0))} ${SHORT[figures.ratio_to]}` : '-',
      cell(figures.ratio),
      percent(figures.spread),
      floor,
      cell(figures.multiple),
      cell(round(figures.own_us, 0)),
      result,
    ]);
  }
  return table(
    [
      'case',
      'store, log',
      'req/s',
      'p50 ms',
      'p99 ms',
      'app CPU µs/answer',
      'paired ref µs',
      'ratio',
      'spread',
      'floor',
      'x echo',
      'own µs',
      'result',
    ],
    rows,
  );
}

/** What the CPU columns mean, printed under the table. */
export const CPU_LEGEND = [
  'app CPU µs/answer: CPU time of the process under load per answer (independent of how many cores it got), median of the rounds;',
  'paired ref µs: the same for the reference run right before each round (node:http: one answer plus one node:http upstream call; echo: the bare Koa echo);',
  `ratio: the case's over its paired reference's, median of the rounds (the figure the floors are set in); spread: (largest - smallest) / median of the rounds' ratios, NOISY above ${NOISY_SPREAD * 100}%;`,
  "x echo: the case over the baseline's median, the figure of earlier runs;",
  "own µs: the service's own work per answer: the case less the echo and, per upstream call, less one call through its client (ref_upstream_call - echo).",
].join('\n');

export function formatMemory(memory: MemoryResult): string {
  const met = memory.bytesPerRecord <= MEMORY_TARGET_BYTES ? 'ok' : 'OVER FLOOR';
  return `memory per pending code (memory store, ${memory.records.toLocaleString('en')} records, V8 heap after GC): ${memory.bytesPerRecord.toFixed(1)} B (floor <= ${MEMORY_TARGET_BYTES} B: ${met}); RSS growth ${memory.rssBytesPerRecord.toFixed(0)} B/record${
    memory.bytesPerSpentChallenge === undefined
      ? ''
      : `; a pending passkey challenge 0 B (its passkey_proof carries it), an answered one ${memory.bytesPerSpentChallenge.toFixed(1)} B until it expires`
  }`;
}

/** CI's rule: every run answered something, and nothing failed. Skipped cases are reported, not failed. */
export function verdict(outcomes: readonly CaseOutcome[], memory?: MemoryResult): Verdict {
  const problems: string[] = [];
  const seen = new Set<LoadResult>();
  const check = (name: string, result: LoadResult) => {
    if (seen.has(result)) return;
    seen.add(result);
    if (result.requests === 0) problems.push(`${name}: no answer at all`);
    if (result.failures > 0) {
      const detail = `non-2xx ${result.non2xx}, socket errors ${result.errors}, timeouts ${result.timeouts}, success:false ${result.mismatches}`;
      problems.push(
        `${name}: ${result.failures} failed (${detail})${result.firstFailure ? `; first: ${result.firstFailure}` : ''}`,
      );
    }
    if (result.exhausted) problems.push(`${name}: ran out of pre-issued codes`);
  };
  for (const { benchCase, runs, paired, base, tail } of outcomes) {
    for (const run of runs ?? []) check(benchCase.name, run.result);
    for (const run of base?.runs ?? []) check(`${benchCase.name} (base build)`, run.result);
    for (const run of paired ?? []) check(benchCase.ratioTo ?? 'reference', run.result);
    for (const run of tail?.runs ?? [])
      check(
        `${benchCase.name} paced at ${Math.round(run.load * 100)}%${run.build === 'base' ? ' (base build)' : ''}`,
        run.result,
      );
  }
  if (memory && !(memory.bytesPerRecord > 0)) problems.push('memory: no growth measured');
  return { ok: problems.length === 0, problems };
}
