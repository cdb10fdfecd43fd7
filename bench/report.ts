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

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

export function ratioOf(outcome: CaseOutcome, baselineRps: number): number | undefined {
  return outcome.result && baselineRps > 0 ? outcome.result.rps / baselineRps : undefined;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** `judgeTargets` false (smoke runs: a second per case, no warm-up) leaves the targets unjudged. */
export function formatTable(outcomes: readonly CaseOutcome[], baselineRps: number, judgeTargets = true): string {
  const rows = outcomes.map((outcome) => {
    const { benchCase, result, skipped, cpu } = outcome;
    const variant = benchCase.service ? `${benchCase.service.store}, ${benchCase.service.logLevel}` : '-';
    const target = benchCase.targetRatio;
    if (!result) return [benchCase.name, variant, '-', '-', '-', '-', target ? `>= ${target}` : '', '-', '-', '-', `skipped: ${skipped ?? 'not run'}`];
    const ratio = ratioOf(outcome, baselineRps);
    let verdict = result.failures > 0 ? `${result.failures} failed` : 'ok';
    if (judgeTargets && target !== undefined && ratio !== undefined && result.failures === 0) verdict = ratio >= target ? 'ok, target met' : 'TARGET MISSED';
    if (result.exhausted) verdict += ' (ran out of pre-issued codes)';
    return [
      benchCase.name,
      variant,
      fixed(result.rps, 0),
      fixed(result.p50, 1),
      fixed(result.p99, 1),
      fixed(ratio ?? NaN, 2),
      target !== undefined ? `>= ${target}` : '',
      fixed(cpu?.appMicrosPerRequest ?? NaN, 0),
      fixed(cpu?.loadCores ?? NaN, 2),
      fixed(cpu?.otherCores ?? NaN, 2),
      verdict,
    ];
  });
  const header = ['case', 'store, log', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'target', 'app CPU µs/req', 'load gen cores', 'other cores', 'result'];
  return table(header, rows);
}

/** What the CPU columns mean, printed under the table. */
export const CPU_LEGEND =
  'app CPU µs/req: CPU time of the process under load per answer (independent of how many cores it got); load gen cores: the load generator\'s CPU; other cores: CPU used by processes outside the benchmark during the case (above ~0.2 the figures are noisy).';

export function formatMemory(memory: MemoryResult): string {
  const met = memory.bytesPerRecord < MEMORY_TARGET_BYTES ? 'target met' : 'TARGET MISSED';
  return `memory per pending code (memory store, ${memory.records.toLocaleString('en')} records, V8 heap after GC): ${memory.bytesPerRecord.toFixed(0)} B (target < ${MEMORY_TARGET_BYTES} B: ${met}); RSS growth ${memory.rssBytesPerRecord.toFixed(0)} B/record`;
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
  const runs = outcomes.filter((o) => !o.benchCase.service && o.result).map((o) => o.result!.rps);
  if (runs.length < 2) return `ratios are to the baseline's ${baselineRps.toFixed(0)} req/s`;
  const drift = (Math.max(...runs) - Math.min(...runs)) / baselineRps;
  const note = drift > 0.15 ? ' (NOISY: the machine\'s pace changed during the run; rerun when it is quiet)' : '';
  return `ratios are to the mean of the baseline's runs at start and end, ${baselineRps.toFixed(0)} req/s; they differ by ${(drift * 100).toFixed(0)}%${note}`;
}
