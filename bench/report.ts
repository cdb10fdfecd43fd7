import { MEMORY_TARGET_BYTES, type BenchCase } from './cases';
import type { CpuUse } from './cpu';
import type { LoadResult } from './load';
import type { MemoryResult } from './memory';

/* The table `npm run bench` prints, and the smoke verdict CI relies on. */

export interface CaseOutcome {
  benchCase: BenchCase;
  result?: LoadResult;
  /** CPU used during the measured run (Linux only). */
  cpu?: CpuUse;
  /** Why the case did not run (an action not registered, no redis-server). */
  skipped?: string;
}

export interface Verdict {
  ok: boolean;
  problems: string[];
}


const isBaseline = (outcome: CaseOutcome) => !outcome.benchCase.service && !outcome.benchCase.transport;
const isReference = (outcome: CaseOutcome) => Boolean(outcome.benchCase.transport);

/** The baseline's app CPU per answer: the mean of its runs (start and end) that were measured. */
export function baselineCpu(outcomes: readonly CaseOutcome[]): number | undefined {
  const runs = outcomes.filter((o) => isBaseline(o) && o.cpu?.appMicrosPerRequest).map((o) => o.cpu!.appMicrosPerRequest!);
  return runs.length > 0 ? runs.reduce((sum, v) => sum + v, 0) / runs.length : undefined;
}

/** A case's app CPU per answer as a multiple of the baseline's: the figure that does not depend on the machine's pace. */
export function multipleOf(outcome: CaseOutcome | undefined, baseline: number | undefined): number | undefined {
  const cpu = outcome?.cpu?.appMicrosPerRequest;
  return cpu && baseline ? cpu / baseline : undefined;
}

export type CaseResult = 'ok' | 'over floor' | 'failed' | 'skipped' | 'not judged' | 'reference';

/** One case as `--json` writes it, and as the table shows it. */
export interface CaseFigures {
  name: string;
  store: string | null;
  log: string | null;
  req_per_s: number | null;
  cpu_us_per_answer: number | null;
  multiple: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  /** The most the multiple may be (for `+info`: the most it may exceed its case's multiple). */
  floor: number | null;
  result: CaseResult;
}

const round = (value: number | undefined, digits: number): number | null => (value === undefined || !Number.isFinite(value) ? null : Number(value.toFixed(digits)));

/** Every service case judged against its floor; `judge` false (smoke: cold, a second each) leaves them unjudged. */
export function caseFigures(outcomes: readonly CaseOutcome[], judge = true): CaseFigures[] {
  const baseline = baselineCpu(outcomes);
  const byName = new Map(outcomes.map((o) => [o.benchCase.name, o]));
  return outcomes
    .filter((o) => o.benchCase.service)
    .map((outcome) => {
      const { benchCase, result, cpu } = outcome;
      const multiple = multipleOf(outcome, baseline);
      const reference = benchCase.relativeTo ? multipleOf(byName.get(benchCase.relativeTo), baseline) : 1;
      const judged = multiple !== undefined && reference !== undefined ? multiple / reference : undefined;
      let verdict: CaseResult = 'not judged';
      if (!result) verdict = 'skipped';
      else if (result.failures > 0 || result.exhausted) verdict = 'failed';
      else if (judge && benchCase.floor !== undefined && judged !== undefined) verdict = judged <= benchCase.floor ? 'ok' : 'over floor';
      else if (judge && benchCase.floor === undefined) verdict = 'ok';
      return {
        name: benchCase.name,
        store: benchCase.service?.store ?? null,
        log: benchCase.service?.logLevel ?? null,
        req_per_s: round(result?.rps, 0),
        cpu_us_per_answer: round(cpu?.appMicrosPerRequest ?? undefined, 1),
        multiple: round(multiple, 2),
        p50_ms: round(result?.p50, 2),
        p99_ms: round(result?.p99, 2),
        floor: benchCase.floor ?? null,
        result: verdict,
      };
    });
}

/** The transport references: their multiples, never judged. */
export function referenceFigures(outcomes: readonly CaseOutcome[]): CaseFigures[] {
  const baseline = baselineCpu(outcomes);
  return outcomes.filter(isReference).map(({ benchCase, result, cpu }, i, all) => ({
    name: benchCase.name,
    store: null,
    log: null,
    req_per_s: round(result?.rps, 0),
    cpu_us_per_answer: round(cpu?.appMicrosPerRequest ?? undefined, 1),
    multiple: round(multipleOf(all[i], baseline), 2),
    p50_ms: round(result?.p50, 2),
    p99_ms: round(result?.p99, 2),
    floor: null,
    result: result && result.failures > 0 ? 'failed' : 'reference',
  }));
}

/** What `--json <file>` writes. */
export function jsonReport(outcomes: readonly CaseOutcome[], baselineRps: number, memory: MemoryResult | undefined, judge: boolean) {
  return {
    baseline: { req_per_s: round(baselineRps, 0), cpu_us_per_answer: round(baselineCpu(outcomes), 1) },
    cases: caseFigures(outcomes, judge),
    references: referenceFigures(outcomes),
    memory_bytes_per_code: memory ? round(memory.bytesPerRecord, 0) : null,
  };
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const cell = (value: number | null) => (value === null ? '-' : String(value));

/** The printed table: each case's multiple beside its floor. */
export function formatTable(outcomes: readonly CaseOutcome[], judge = true): string {
  const baseline = outcomes.filter((o) => isBaseline(o) && o.result);
  const rows = baseline.map((o) => [o.benchCase.name, '-', cell(round(o.result!.rps, 0)), cell(round(o.result!.p50, 1)), cell(round(o.result!.p99, 1)), cell(round(o.cpu?.appMicrosPerRequest ?? undefined, 0)), '1.00', '', 'baseline']);
  for (const figures of caseFigures(outcomes, judge)) {
    const outcome = outcomes.find((o) => o.benchCase.name === figures.name)!;
    const floor = figures.floor === null ? '' : outcome.benchCase.relativeTo ? `x${figures.floor} of ${outcome.benchCase.relativeTo}` : `<= ${figures.floor}`;
    const result = figures.result === 'skipped' ? `skipped: ${outcome.skipped ?? 'not run'}` : figures.result === 'failed' && outcome.result ? `${outcome.result.failures} failed${outcome.result.exhausted ? ' (ran out of pre-issued codes)' : ''}` : figures.result;
    rows.push([figures.name, `${figures.store}, ${figures.log}`, cell(figures.req_per_s), cell(round(figures.p50_ms ?? undefined, 1)), cell(round(figures.p99_ms ?? undefined, 1)), cell(round(figures.cpu_us_per_answer ?? undefined, 0)), cell(figures.multiple), floor, result]);
  }
  for (const figures of referenceFigures(outcomes)) {
    rows.push([figures.name, '-', cell(figures.req_per_s), cell(round(figures.p50_ms ?? undefined, 1)), cell(round(figures.p99_ms ?? undefined, 1)), cell(round(figures.cpu_us_per_answer ?? undefined, 0)), cell(figures.multiple), '', figures.result]);
  }
  return table(['case', 'store, log', 'req/s', 'p50 ms', 'p99 ms', 'app CPU µs/answer', 'multiple', 'floor', 'result'], rows);
}

/** What the CPU columns mean, printed under the table. */
export const CPU_LEGEND =
  'app CPU µs/answer: CPU time of the process under load per answer (independent of how many cores it got); multiple: that, divided by the baseline\'s in the same run (the figure the floors are set in).';

export function formatMemory(memory: MemoryResult): string {
  const met = memory.bytesPerRecord <= MEMORY_TARGET_BYTES ? 'ok' : 'OVER FLOOR';
  return `memory per pending code (memory store, ${memory.records.toLocaleString('en')} records, V8 heap after GC): ${memory.bytesPerRecord.toFixed(0)} B (floor <= ${MEMORY_TARGET_BYTES} B: ${met}); RSS growth ${memory.rssBytesPerRecord.toFixed(0)} B/record`;
}

/** CI's rule: every case that ran answered something, and nothing failed. Skipped cases are reported, not failed. */
export function verdict(outcomes: readonly CaseOutcome[], memory?: MemoryResult): Verdict {
  const problems: string[] = [];
  for (const { benchCase, result } of outcomes) {
    if (!result) continue;
    if (result.requests === 0) problems.push(`${benchCase.name}: no answer at all`);
    if (result.failures > 0) {
      const detail = `non-2xx ${result.non2xx}, socket errors ${result.errors}, timeouts ${result.timeouts}, success:false ${result.mismatches}`;
      problems.push(`${benchCase.name}: ${result.failures} failed (${detail})${result.firstFailure ? `; first: ${result.firstFailure}` : ''}`);
    }
    if (result.exhausted) problems.push(`${benchCase.name}: ran out of pre-issued codes`);
  }
  if (memory && !(memory.bytesPerRecord > 0)) problems.push('memory: no growth measured');
  return { ok: problems.length === 0, problems };
}

/** The baseline the ratios use, and how far its two measurements (start, end) drifted apart. */
export function formatBaseline(outcomes: readonly CaseOutcome[], baselineRps: number): string {
  const runs = outcomes.filter((o) => isBaseline(o) && o.result).map((o) => o.result!.rps);
  if (runs.length < 2) return `ratios are to the baseline's ${baselineRps.toFixed(0)} req/s`;
  const drift = (Math.max(...runs) - Math.min(...runs)) / baselineRps;
  const note = drift > 0.15 ? ' (NOISY: the machine\'s pace changed during the run; rerun when it is quiet)' : '';
  return `ratios are to the mean of the baseline's runs at start and end, ${baselineRps.toFixed(0)} req/s; they differ by ${(drift * 100).toFixed(0)}%${note}`;
}
