import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { BASELINE, BASELINE_END, REFERENCE_CASES, SERVICE_CASES, phonePrefix, variantKey, type BenchCase, type ServiceVariant } from './cases';
import { benchFile, startChild, type Child } from './child';
import type { LoadResult, LoadSpec } from './load';
import type { MemoryResult } from './memory';
import { parseOptions, UsageError, type BenchOptions } from './options';
import { formatHotFunctions } from './profile';
import { redisInstalled, startRedis, type BenchRedis } from './redis';
import { watchCpu } from './cpu';
import { caseFigures, CPU_LEGEND, formatBaseline, formatMemory, formatTable, jsonReport, verdict, type CaseOutcome } from './report';
import { MEMORY_TARGET_BYTES } from './cases';
import { BENCH_INTERNAL_KEY, type ServiceOptions } from './service';

/*
 * `npm run bench`: issue 7's benchmark. Processes: the fake upstreams, the baseline app, the
 * service (one per store/log variant), the load generator and the memory probe, each its own
 * node process, driven from here over IPC. See docs/performance.md for what it measures and why.
 */

/** The code every pre-issued verify_otp key holds. */
const PREISSUED_CODE = '482916';
/** The uid get_user asks for (the recorded profile's). */
const BENCH_UID = 'PNIa7Xk2mR0ssi';

type Say = (line: string) => void;

interface Machine {
  cpus: number;
  node: string;
  load: string;
}

/**
 * The app under load (baseline or service) gets CPU 0 to itself, everything else (load
 * generator, fake upstreams, Redis) the other CPUs: the app's figures then say what one core
 * does, the same core for the baseline and the service, and a profile of the app is not
 * inflated by the load generator preempting it on its own core.
 */
export function cpuPlan(pin: boolean): { app?: string; rest?: string } {
  const cpus = availableParallelism();
  if (!pin || cpus < 2) return {};
  const probe = spawnSync('taskset', ['-c', '0', 'true']);
  if (probe.error || probe.status !== 0) return {};
  return { app: '0', rest: cpus === 2 ? '1' : `1-${cpus - 1}` };
}

export const machine = (): Machine => ({ cpus: availableParallelism(), node: process.version, load: loadavg().map((l) => l.toFixed(2)).join(' ') });

export interface BenchReport {
  outcomes: CaseOutcome[];
  baselineRps: number;
  memory?: MemoryResult;
  profiles: string[];
}

export async function runBench(options: BenchOptions, say: Say = (line) => process.stdout.write(`${line}\n`)): Promise<BenchReport> {
  const stoppers: Array<() => Promise<void>> = [];
  const outcomes: CaseOutcome[] = [];
  const profiles: string[] = [];
  const cpus = cpuPlan(options.pin);
  if (cpus.app) say(`.. pinned: the app under load on CPU ${cpus.app}; load generator, fake upstreams and Redis on CPU ${cpus.rest}`);
  try {
    const upstreams = await startChild<{ url: string }>(benchFile('upstreams.ts'), [], { cpus: cpus.rest });
    stoppers.push(() => upstreams.stop());
    const load = await startChild<unknown>(benchFile('load.ts'), [], { cpus: cpus.rest });
    stoppers.push(() => load.stop());
    let redis: BenchRedis | undefined;
    const spec = (benchCase: BenchCase, url: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({
      kind: benchCase.kind,
      url,
      duration: options.duration,
      connections: options.connections,
      phonePrefix: phonePrefix(benchCase),
      ...extra,
    });
    /** Warm-up (answers not counted), then the measured run with the CPU each process used in it. */
    const measure = async (benchCase: BenchCase, loadSpec: LoadSpec, app: Child<unknown>) => {
      say(`.. ${benchCase.name}: ${benchCase.label} (${options.warmup > 0 ? `${options.warmup} s warm-up + ` : ''}${options.duration} s, ${options.connections} connections)`);
      if (options.warmup > 0) {
        const warm = await load.call<LoadResult>({ type: 'run', spec: { ...loadSpec, duration: options.warmup } });
        loadSpec = { ...loadSpec, firstIndex: warm.nextIndex };
      }
      if (options.profileDir && benchCase.service) await app.call({ type: 'profile-start' });
      const cpu = watchCpu(app.process.pid, load.process.pid, [upstreams.process.pid, redis?.pid]);
      const result = await load.call<LoadResult>({ type: 'run', spec: loadSpec });
      outcomes.push({ benchCase, result, cpu: cpu.stop(result.requests) });
      if (options.profileDir && benchCase.service) {
        profiles.push(await app.call<string>({ type: 'profile-stop', file: join(options.profileDir, `${benchCase.name.replace(/[^\w.-]/g, '_')}.cpuprofile`) }));
      }
      return result;
    };

    /** (a) runs in its own process, which goes away after: it must not hold a core while the service is measured. */
    const measureBaseline = async (benchCase: BenchCase) => {
      const args = benchCase.transport ? [benchCase.transport, upstreams.ready.url] : [];
      const baselineApp = await startChild<{ url: string }>(benchFile('baseline.ts'), args, { cpus: cpus.app });
      try {
        return await measure(benchCase, spec(benchCase, baselineApp.ready.url), baselineApp);
      } finally {
        await baselineApp.stop();
      }
    };
    const baseline = await measureBaseline(BASELINE);
    for (const reference of REFERENCE_CASES.filter((c) => !options.cases || options.cases.includes(c.name))) await measureBaseline(reference);

    const selected = SERVICE_CASES.filter((c) => !options.cases || options.cases.includes(c.name));
    let redisSkip: string | undefined;
    if (selected.some((c) => c.service?.store === 'redis')) {
      if (!options.redis) redisSkip = '--no-redis';
      else if (!redisInstalled()) redisSkip = 'redis-server not installed';
      else {
        redis = await startRedis(cpus.rest);
        stoppers.push(() => redis!.stop());
      }
    }

    let current: { key: string; child: Child<{ url: string }> } | undefined;
    const serviceFor = async (variant: ServiceVariant) => {
      const key = variantKey(variant);
      // One instance per variant, or per case when profiling (each profile then holds one case's work).
      if (current && (current.key !== key || options.profileDir)) {
        await current.child.stop();
        current = undefined;
      }
      if (!current) {
        const serviceOptions: ServiceOptions = { upstreams: upstreams.ready.url, store: variant.store, logLevel: variant.logLevel, redisUrl: redis?.url, floor: variant.floor, funnel: variant.funnel !== false };
        current = { key, child: await startChild<{ url: string }>(benchFile('service.ts'), [JSON.stringify(serviceOptions)], { cpus: cpus.app }) };
      }
      return current.child;
    };
    stoppers.push(async () => current?.child.stop());

    for (const benchCase of selected) {
      if (benchCase.service?.store === 'redis' && !redis) {
        outcomes.push({ benchCase, skipped: redisSkip });
        continue;
      }
      const service = await serviceFor(benchCase.service!);
      if (benchCase.requires) {
        const registered = new Set(await service.call<string[]>({ type: 'actions' }));
        const missing = benchCase.requires.filter((name) => !registered.has(name));
        if (missing.length > 0) {
          say(`.. ${benchCase.name}: skipped: ${missing.join(', ')} not registered`);
          outcomes.push({ benchCase, skipped: `${missing.join(', ')} not registered` });
          continue;
        }
      }
      const extra: Partial<LoadSpec> = {};
      if (benchCase.kind === 'verify_otp') {
        // One-shot codes: enough for the baseline's pace over the whole run, with a margin.
        const keys = Math.ceil(Math.max(baseline.rps, 1000) * (options.duration + options.warmup) * 1.3) + options.connections * 4;
        await service.call({ type: 'preissue', prefix: phonePrefix(benchCase), count: keys, code: PREISSUED_CODE });
        Object.assign(extra, { keys, code: PREISSUED_CODE });
      }
      if (benchCase.kind === 'get_user') Object.assign(extra, { internalKey: BENCH_INTERNAL_KEY, uid: BENCH_UID });
      await measure(benchCase, spec(benchCase, service.ready.url, extra), service);
    }
    await current?.child.stop();
    current = undefined;
    // (a) again at the end (not in smoke runs): the ratios use both, and a drift between them says the machine's pace changed.
    const baselines = [baseline];
    if (!options.smoke && outcomes.some((o) => o.benchCase.service && o.result)) baselines.push(await measureBaseline(BASELINE_END));

    let memory: MemoryResult | undefined;
    if (!options.cases || options.cases.includes('memory')) {
      say(`.. memory: ${options.records.toLocaleString('en')} pending codes in the memory store`);
      const probe = await startChild<unknown>(benchFile('memory.ts'), [], { nodeArgs: ['--expose-gc'] });
      stoppers.push(() => probe.stop());
      memory = await probe.call<MemoryResult>({ type: 'measure', records: options.records });
    }
    return { outcomes, baselineRps: baselines.reduce((sum, b) => sum + b.rps, 0) / baselines.length, memory, profiles };
  } finally {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    process.exit(64);
  }
  if (options.profileDir) {
    options.profileDir = resolve(options.profileDir);
    mkdirSync(options.profileDir, { recursive: true });
  }
  const host = machine();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`bench: ${options.smoke ? 'smoke' : 'full'} run; ${host.cpus} CPUs, node ${host.node}, load average ${host.load}`);
  const report = await runBench(options, say);
  say('');
  say(formatTable(report.outcomes, !options.smoke));
  if (options.smoke) say('smoke run: cold and short, so the targets are not judged (run `npm run bench` for figures)');
  say(formatBaseline(report.outcomes, report.baselineRps));
  say(CPU_LEGEND);
  if (report.memory) say(`\n${formatMemory(report.memory)}`);
  for (const file of report.profiles) say(`\n${formatHotFunctions(file)}`);
  const { ok, problems } = verdict(report.outcomes, report.memory);
  say(`\nload average after: ${machine().load}`);
  for (const problem of problems) say(`FAILED ${problem}`);
  // A full run also holds every case to its floor; a smoke run is cold and short, so only to answering.
  const over = options.smoke ? [] : caseFigures(report.outcomes).filter((c) => c.result === 'over floor').map((c) => c.name);
  if (!options.smoke && report.memory && report.memory.bytesPerRecord > MEMORY_TARGET_BYTES) over.push('memory');
  if (over.length > 0) say(`OVER FLOOR: ${over.join(', ')}`);
  if (options.jsonFile) {
    writeFileSync(options.jsonFile, `${JSON.stringify(jsonReport(report.outcomes, report.baselineRps, report.memory, !options.smoke), null, 2)}\n`);
    say(`figures written to ${options.jsonFile}`);
  }
  process.exitCode = ok && over.length === 0 ? 0 : 1;
}

if (require.main === module) void main();
