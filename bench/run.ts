import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { AgainstError, BASE_MEMORY, BASE_SERVICE, pairOrder, prepareBase, resolveRef, type BaseBuild } from './against';
import { BASE_NOISY_SPREAD } from './base-floors';
import {
  BASELINE,
  CASES,
  MEMORY_TARGET_BYTES,
  NOISY_SPREAD,
  PAIRING,
  REF_NODE_HTTP,
  TAIL_CASE,
  TAIL_DURATION,
  TAIL_LOADS,
  TAIL_NOISY_SPREAD,
  TAIL_ROUNDS,
  phonePrefix,
  type BenchCase,
  type ServiceVariant,
} from './cases';
import { benchFile, startChild, type Child } from './child';
import type { LoadResult, LoadSpec } from './load';
import type { MemoryResult } from './memory';
import { BENCH_USAGE, parseOptions, UsageError, type BenchOptions } from './options';
import { formatHotFunctions } from './profile';
import { redisInstalled, startRedis, type BenchRedis } from './redis';
import { watchCpu } from './cpu';
import {
  AGAINST_LEGEND,
  againstFigures,
  caseFigures,
  CPU_LEGEND,
  formatAgainst,
  formatMemory,
  formatTable,
  formatTail,
  jsonReport,
  median,
  TAIL_LEGEND,
  tailFigures,
  verdict,
  type CaseOutcome,
  type Run,
  type TailOutcome,
} from './report';
import { BENCH_INTERNAL_KEY, type ServiceOptions } from './service';

/*
 * `npm run bench`: the benchmark of issues 7 and 26. Processes: the fake upstreams, the
 * reference apps (the bare echo, the echo plus one upstream call), the service (one per
 * store/log variant), the load generator and the memory probe, each its own node process,
 * driven from here over IPC. Each case runs in rounds, each round right after a run of its
 * reference on the same core, so a machine whose pace changes moves both sides of a ratio.
 * See docs/performance.md for what it measures and why.
 */

/**
 * Warm-ups before a service case's first round, beyond the one before every run: a path run for
 * the first time on an instance measured a fifth to a half above its later rounds (JIT, caches,
 * the heap growing to its working size), which alone made a three-round spread NOISY.
 */
const SETTLE_WARMUPS = 4;

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

export const machine = (): Machine => ({
  cpus: availableParallelism(),
  node: process.version,
  load: loadavg()
    .map((l) => l.toFixed(2))
    .join(' '),
});

export interface BenchReport {
  outcomes: CaseOutcome[];
  memory?: MemoryResult;
  /** The base build's memory per pending code, with --against (when its checkout has the probe). */
  baseMemory?: MemoryResult;
  profiles: string[];
}

/** The other build of an --against run: its checkout, where its own service child is started from. */
export type BaseCheckout = Pick<BaseBuild, 'dir'>;

/**
 * The cases a run measures. With a base build, `ref_upstream_call` joins any selection with a
 * case that makes upstream calls: both builds' own µs take that call's cost off.
 */
export function selectCases(options: Pick<BenchOptions, 'cases'>, withBase: boolean): BenchCase[] {
  const wanted = (c: BenchCase) => !options.cases || options.cases.includes(c.name);
  const callsUpstream = CASES.some((c) => wanted(c) && c.service && (c.upstreamCalls ?? 0) > 0);
  return CASES.filter((c) => wanted(c) || (withBase && callsUpstream && c.name === 'ref_upstream_call'));
}

/** The bench cannot run as asked (a Redis case without redis-server): said to the user, exit 1. */
export class BenchSetupError extends Error {}

export const REDIS_MISSING =
  'redis-server is not installed, and the Redis cases need a real one (the bench starts it on a free port, as the tests do). Install it with `sudo apt-get install redis-server`, or pass --skip-redis to run without those cases.';

/** Why the selected cases cannot run here, if they cannot: a Redis case needs redis-server unless --skip-redis. */
export function setupRefusal(options: BenchOptions, installed: () => boolean = redisInstalled): string | undefined {
  const wantsRedis = CASES.some(
    (c) => c.service?.store === 'redis' && (!options.cases || options.cases.includes(c.name)),
  );
  return wantsRedis && options.redis && !installed() ? REDIS_MISSING : undefined;
}

export async function runBench(
  options: BenchOptions,
  say: Say = (line) => process.stdout.write(`${line}\n`),
  base?: BaseCheckout,
): Promise<BenchReport> {
  const stoppers: Array<() => Promise<void>> = [];
  const outcomes: CaseOutcome[] = [];
  const profiles: string[] = [];
  const selected = selectCases(options, Boolean(base));
  const wantsRedis = selected.some((c) => c.service?.store === 'redis');
  const refusal = setupRefusal(options);
  if (refusal) throw new BenchSetupError(refusal);
  const cpus = cpuPlan(options.pin);
  if (cpus.app)
    say(
      `.. pinned: the app under load on CPU ${cpus.app}; load generator, fake upstreams and Redis on CPU ${cpus.rest}`,
    );
  try {
    const upstreams = await startChild<{ url: string }>(benchFile('upstreams.ts'), [], { cpus: cpus.rest });
    stoppers.push(() => upstreams.stop());
    const load = await startChild<unknown>(benchFile('load.ts'), [], { cpus: cpus.rest });
    stoppers.push(() => load.stop());
    const loadRun = (loadSpec: LoadSpec) => load.call<LoadResult>({ type: 'run', spec: loadSpec });
    let redis: BenchRedis | undefined;
    // The base build's Redis cases get a redis-server of their own: both builds use the same phones and key prefix.
    let baseRedis: BenchRedis | undefined;
    const spec = (benchCase: BenchCase, url: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({
      kind: benchCase.kind,
      url,
      duration: options.duration,
      connections: options.connections,
      phonePrefix: phonePrefix(benchCase),
      ...extra,
    });
    /** Warm-up (answers not counted), then the measured window with the CPU each process used in it. */
    const measure = async (
      benchCase: BenchCase,
      loadSpec: LoadSpec,
      app: Child<unknown>,
      profileFile?: string,
      build = '',
    ): Promise<{ run: Run; nextIndex: number }> => {
      say(
        `.. ${benchCase.name}${build}: ${benchCase.label} (${options.warmup > 0 ? `${options.warmup} s warm-up + ` : ''}${loadSpec.duration} s, ${options.connections} connections)`,
      );
      if (options.warmup > 0) {
        const warm = await load.call<LoadResult>({ type: 'run', spec: { ...loadSpec, duration: options.warmup } });
        loadSpec = { ...loadSpec, firstIndex: warm.nextIndex };
      }
      if (profileFile) await app.call({ type: 'profile-start' });
      const cpu = watchCpu(app.process.pid, load.process.pid, [upstreams.process.pid, redis?.pid, baseRedis?.pid]);
      const result = await load.call<LoadResult>({ type: 'run', spec: loadSpec });
      const run = { result, cpu: cpu.stop(result.requests) };
      if (profileFile) profiles.push(await app.call<string>({ type: 'profile-stop', file: profileFile }));
      return { run, nextIndex: result.nextIndex };
    };

    // The reference apps stay up, idle, between their runs: each is measured right before the
    // round it is paired with, and a process started for every round would be measured cold.
    const referenceApps = new Map<string, Child<{ url: string }>>();
    const referenceApp = async (benchCase: BenchCase) => {
      let app = referenceApps.get(benchCase.name);
      if (!app) {
        const args = benchCase.transport ? [benchCase.transport, upstreams.ready.url] : [];
        app = await startChild<{ url: string }>(benchFile('baseline.ts'), args, { cpus: cpus.app });
        referenceApps.set(benchCase.name, app);
        stoppers.push(() => app!.stop());
      }
      return app;
    };
    /** An unmeasured run before a service path's first round on its instance (SETTLE_WARMUPS): answers where the next run takes its phones on. */
    const settle = async (benchCase: BenchCase, loadSpec: LoadSpec): Promise<number> => {
      if (options.warmup === 0) return loadSpec.firstIndex ?? 0;
      say(`.. ${benchCase.name}: settling (${options.warmup * SETTLE_WARMUPS} s, not measured)`);
      const settled = await load.call<LoadResult>({
        type: 'run',
        spec: { ...loadSpec, duration: options.warmup * SETTLE_WARMUPS },
      });
      return settled.nextIndex;
    };

    // A smoke run measures each reference once and pairs every case with that run.
    const lastReference = new Map<string, Run>();
    // A service as reference (login-funnel-off) keeps its OTP store between runs: each run takes phones on from the last.
    const referenceIndex = new Map<string, number>();
    const referenceRun = async (reference: BenchCase, duration = options.duration): Promise<Run> => {
      const kept = lastReference.get(reference.name);
      if (options.smoke && kept) return kept;
      const app = reference.service
        ? await serviceFor(reference.name, reference.service)
        : await referenceApp(reference);
      let firstIndex = referenceIndex.get(reference.name);
      if (firstIndex === undefined) {
        firstIndex = reference.service ? await settle(reference, spec(reference, app.ready.url, { firstIndex: 0 })) : 0;
      }
      const { run, nextIndex } = await measure(
        reference,
        spec(reference, app.ready.url, { firstIndex, duration }),
        app,
      );
      referenceIndex.set(reference.name, nextIndex);
      lastReference.set(reference.name, run);
      return run;
    };

    const baseline = await referenceRun(BASELINE);
    outcomes.push({ benchCase: BASELINE, runs: [baseline] });
    if (options.cases?.includes(REF_NODE_HTTP.name))
      outcomes.push({ benchCase: REF_NODE_HTTP, runs: [await referenceRun(REF_NODE_HTTP)] });

    let redisSkip: string | undefined;
    if (wantsRedis) {
      if (!options.redis) redisSkip = '--skip-redis';
      else {
        redis = await startRedis(cpus.rest);
        stoppers.push(() => redis!.stop());
        if (base) {
          baseRedis = await startRedis(cpus.rest);
          stoppers.push(() => baseRedis!.stop());
        }
      }
    }

    // One fresh instance per case, and one per service used as a reference (login-funnel-off),
    // kept while the case paired with it runs. Cases once shared an instance per variant: the
    // login pair then ran on a heap grown by the codes of the cases before it and read 17% dearer
    // than the same code on a fresh instance (CHANGELOG.md, 2026-11-26), so a figure depended on order.
    const services = new Map<string, Child<{ url: string }>>();
    const serviceFor = async (owner: string, variant: ServiceVariant, build: 'new' | 'base' = 'new') => {
      const key = build === 'base' ? `base:${owner}` : owner;
      let child = services.get(key);
      if (!child) {
        const challenge = variant.challenge ? `, defences on, challenge ${variant.challenge}` : '';
        say(
          `.. ${owner}: a fresh service instance (${variant.store}, ${variant.logLevel}${variant.floor ? ', noop action' : ''}${variant.funnel === false ? ', funnel off' : ''}${challenge}${variant.tracing === undefined ? '' : `, tracing ${variant.tracing}`})${build === 'base' ? ' of the base build' : ''}`,
        );
        const onBase = build === 'base' && base;
        const serviceOptions: ServiceOptions = {
          upstreams: upstreams.ready.url,
          store: variant.store,
          logLevel: variant.logLevel,
          redisUrl: (onBase ? baseRedis : redis)?.url,
          floor: variant.floor,
          funnel: variant.funnel !== false,
          ...(variant.challenge ? { challenge: variant.challenge } : {}),
          ...(variant.tracing === undefined ? {} : { tracing: variant.tracing }),
          ...(variant.passkeys ? { passkeys: true } : {}),
        };
        const file = onBase ? join(onBase.dir, BASE_SERVICE) : benchFile('service.ts');
        child = await startChild<{ url: string }>(file, [JSON.stringify(serviceOptions)], {
          cpus: cpus.app,
          cwd: onBase ? onBase.dir : undefined,
          // The embedded PostgreSQL (WebAssembly) compiles at start: 23 s on one busy core.
          ...(variant.passkeys ? { timeoutMs: 120_000 } : {}),
        });
        services.set(key, child);
        if (variant.challenge) {
          // A gate built off (the defences off turn an adaptive setting off) would make the pair measure nothing.
          const mode = await child.call<string>({ type: 'challenge-mode' });
          if (mode !== variant.challenge)
            throw new Error(
              `${owner}: the service's challenge gate runs in mode ${mode}, the case needs ${variant.challenge}`,
            );
        }
      }
      return child;
    };
    const stopServices = async (keep: (owner: string) => boolean = () => false) => {
      for (const [owner, child] of services) {
        if (keep(owner)) continue;
        services.delete(owner);
        await child.stop();
      }
    };
    stoppers.push(() => stopServices());

    for (const benchCase of selected) {
      if (benchCase.service?.store === 'redis' && !redis) {
        outcomes.push({ benchCase, skipped: redisSkip });
        continue;
      }
      const reference = PAIRING[benchCase.ratioTo ?? 'baseline'];
      // Every instance but this case's reference's stops (an idle one on the app's core is not measured, but holds memory); when profiling, that one too, so a profile holds one case's work.
      await stopServices((owner) => !options.profileDir && owner === reference.name);
      const app = benchCase.service
        ? await serviceFor(benchCase.name, benchCase.service)
        : await referenceApp(benchCase);
      const missingOn = async (child: Child<unknown>) => {
        if (!benchCase.requires) return [];
        const registered = new Set(await child.call<string[]>({ type: 'actions' }));
        return benchCase.requires.filter((name) => !registered.has(name));
      };
      const missing = await missingOn(app);
      if (missing.length > 0) {
        say(`.. ${benchCase.name}: skipped: ${missing.join(', ')} not registered`);
        outcomes.push({ benchCase, skipped: `${missing.join(', ')} not registered` });
        continue;
      }
      // The base build runs every service case too, on a fresh instance of its own beside this one's; a setting's pair (thisBuildOnly) runs on this build alone.
      if (base && benchCase.service && benchCase.thisBuildOnly)
        say(
          `.. ${benchCase.name}: this build only (a setting's cost within one build; the base may not have the setting)`,
        );
      let baseApp =
        base && benchCase.service && !benchCase.thisBuildOnly
          ? await serviceFor(benchCase.name, benchCase.service, 'base')
          : undefined;
      const outcome: CaseOutcome = { benchCase, runs: [], paired: [] };
      if (baseApp) {
        const baseMissing = await missingOn(baseApp);
        outcome.base = {
          runs: [],
          skipped: baseMissing.length > 0 ? `${baseMissing.join(', ')} not registered in the base build` : undefined,
        };
        if (baseMissing.length > 0) {
          say(`.. ${benchCase.name}: not on the base build: ${outcome.base.skipped}`);
          baseApp = undefined;
        }
      }
      const extra: Partial<LoadSpec> = {};
      if (benchCase.kind === 'verify_otp') {
        // One-shot codes: enough for the baseline's pace over every round, with a margin. A smoke
        // run's one cold second of the echo on a loaded machine read 1,018 req/s while verify_otp
        // then answered 1,851 and ran out: a smoke run counts on at least 5,000.
        const keys =
          Math.ceil(
            Math.max(baseline.result.rps, options.smoke ? 5000 : 1000) *
              ((options.duration + options.warmup) * options.rounds + options.warmup * SETTLE_WARMUPS) *
              1.3,
          ) +
          options.connections * 4;
        for (const child of [app, baseApp])
          await child?.call({ type: 'preissue', prefix: phonePrefix(benchCase), count: keys, code: PREISSUED_CODE });
        Object.assign(extra, { keys, code: PREISSUED_CODE });
      }
      if (benchCase.kind === 'get_user') Object.assign(extra, { internalKey: BENCH_INTERNAL_KEY, uid: BENCH_UID });
      outcomes.push(outcome);
      let firstIndex = benchCase.service
        ? await settle(benchCase, spec(benchCase, app.ready.url, { ...extra, firstIndex: 0 }))
        : 0;
      let baseIndex = baseApp
        ? await settle(benchCase, spec(benchCase, baseApp.ready.url, { ...extra, firstIndex: 0 }))
        : 0;
      // A case that asks for more (a small difference to resolve) gets more rounds and longer runs, its reference too.
      const rounds = options.smoke ? options.rounds : Math.max(options.rounds, benchCase.rounds ?? 0);
      const duration = options.smoke ? options.duration : Math.max(options.duration, benchCase.duration ?? 0);
      for (let round = 0; round < rounds; round++) {
        outcome.paired!.push(await referenceRun(reference, duration));
        // With a base build, the two run back to back, the first of the pair swapping each round.
        for (const build of baseApp ? pairOrder(round) : (['new'] as const)) {
          if (build === 'base') {
            const { run, nextIndex } = await measure(
              benchCase,
              spec(benchCase, baseApp!.ready.url, { ...extra, firstIndex: baseIndex, duration }),
              baseApp!,
              undefined,
              ' [base]',
            );
            outcome.base!.runs.push(run);
            baseIndex = nextIndex;
            continue;
          }
          // The profile covers the first round only: the profiler's own cost would skew the rounds after it.
          const profileFile =
            options.profileDir && benchCase.service && round === 0
              ? join(options.profileDir, `${benchCase.name.replace(/[^\w.-]/g, '_')}.cpuprofile`)
              : undefined;
          const { run, nextIndex } = await measure(
            benchCase,
            spec(benchCase, app.ready.url, { ...extra, firstIndex, duration }),
            app,
            profileFile,
            base && benchCase.service ? ' [new]' : '',
          );
          outcome.runs!.push(run);
          firstIndex = nextIndex;
        }
      }
      if (benchCase.name !== TAIL_CASE) continue;
      // The tail figure: the same instances, paced at shares of what they reached in closed loop.
      const saturating = {
        new: median(outcome.runs!.map((r) => r.result.rps)) ?? 0,
        base: baseApp ? median(outcome.base!.runs.map((r) => r.result.rps)) : undefined,
      };
      const failedRounds = [...outcome.runs!, ...(outcome.base?.runs ?? [])].some(
        (r) => r.result.failures > 0 || r.result.requests === 0,
      );
      if (failedRounds) {
        say(`.. ${benchCase.name}: no tail-latency runs: its closed-loop rounds failed`);
        continue;
      }
      const tail: TailOutcome = { saturating, basis: Math.min(saturating.new, saturating.base ?? Infinity), runs: [] };
      outcome.tail = tail;
      const tailRounds = options.smoke ? 1 : TAIL_ROUNDS;
      const tailDuration = options.smoke ? options.duration : Math.max(options.duration, TAIL_DURATION);
      if (options.smoke)
        say(`.. ${benchCase.name}: tail latency, smoke: one ${tailDuration} s paced run per load, not judged`);
      for (const share of TAIL_LOADS) {
        const rate = Math.max(1, Math.round(tail.basis * share));
        for (let round = 0; round < tailRounds; round++) {
          for (const build of baseApp ? pairOrder(round) : (['new'] as const)) {
            const onBase = build === 'base';
            const child = onBase ? baseApp! : app;
            say(
              `.. ${benchCase.name}${baseApp ? ` [${build}]` : ''}: paced at ${Math.round(share * 100)}% of ${Math.round(tail.basis)} req/s = ${rate} req/s (${tailDuration} s)`,
            );
            const result = await loadRun(
              spec(benchCase, child.ready.url, {
                ...extra,
                firstIndex: onBase ? baseIndex : firstIndex,
                duration: tailDuration,
                rate,
              }),
            );
            if (onBase) baseIndex = result.nextIndex;
            else firstIndex = result.nextIndex;
            tail.runs.push({ load: share, rate, build, result });
          }
        }
      }
    }
    await stopServices();

    let memory: MemoryResult | undefined;
    let baseMemory: MemoryResult | undefined;
    if (!options.cases || options.cases.includes('memory')) {
      say(`.. memory: ${options.records.toLocaleString('en')} pending codes in the memory store`);
      const probe = await startChild<unknown>(benchFile('memory.ts'), [], { nodeArgs: ['--expose-gc'] });
      stoppers.push(() => probe.stop());
      memory = await probe.call<MemoryResult>({ type: 'measure', records: options.records });
      if (base && existsSync(join(base.dir, BASE_MEMORY))) {
        say('.. memory: the same in the base build');
        const baseProbe = await startChild<unknown>(join(base.dir, BASE_MEMORY), [], {
          nodeArgs: ['--expose-gc'],
          cwd: base.dir,
        });
        stoppers.push(() => baseProbe.stop());
        baseMemory = await baseProbe.call<MemoryResult>({ type: 'measure', records: options.records });
      }
    }
    return { outcomes, memory, baseMemory, profiles };
  } finally {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
  }
}

/** Checks out and installs the build `--against` names; said to the user and exit 1 when it cannot be. */
function baseBuild(options: BenchOptions, say: Say): BaseBuild | undefined {
  if (!options.against) return undefined;
  try {
    const resolved = resolveRef(options.against);
    say(
      `.. base: ${resolved.ref}${resolved.ref === resolved.commit ? '' : ` = ${resolved.commit.slice(0, 12)}`}, checked out in a temporary worktree`,
    );
    const build = prepareBase(resolved, say);
    say(`.. base: dependencies: ${build.deps}`);
    return build;
  } catch (err) {
    if (!(err instanceof AgainstError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    process.exit(1);
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
  if (options.help) {
    process.stdout.write(BENCH_USAGE);
    return;
  }
  if (options.profileDir) {
    options.profileDir = resolve(options.profileDir);
    mkdirSync(options.profileDir, { recursive: true });
  }
  const host = machine();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(
    `bench: ${options.smoke ? 'smoke' : 'full'} run; ${host.cpus} CPUs, node ${host.node}, load average ${host.load}`,
  );
  const base = baseBuild(options, say);
  // Ctrl-C or a kill still removes the base's checkout (the worktree would otherwise stay registered).
  const interrupted = () => {
    base?.close();
    process.exit(130);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  let report: BenchReport;
  try {
    report = await runBench(options, say, base);
  } catch (err) {
    if (!(err instanceof BenchSetupError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    process.exitCode = 1;
    return;
  } finally {
    base?.close();
  }
  const judge = !options.smoke;
  say('');
  say(formatTable(report.outcomes, judge));
  if (options.smoke)
    say('smoke run: cold, short and unpaired, so the floors are not judged (run `npm run bench` for figures)');
  say(CPU_LEGEND);
  const against = base ? againstFigures(report.outcomes, judge) : [];
  if (base) {
    say(
      `\nagainst ${base.ref} (${base.commit.slice(0, 12)}): each service case on both builds, alternating round by round`,
    );
    say(formatAgainst(against));
    say(AGAINST_LEGEND);
  }
  const tail = tailFigures(report.outcomes, judge);
  if (tail) {
    say(`\n${formatTail(tail)}`);
    say(TAIL_LEGEND);
  }
  if (report.memory) say(`\n${formatMemory(report.memory)}`);
  if (report.baseMemory) say(`base build: ${formatMemory(report.baseMemory)}`);
  for (const file of report.profiles) say(`\n${formatHotFunctions(file)}`);
  const { ok, problems } = verdict(report.outcomes, report.memory);
  say(`\nload average after: ${machine().load}`);
  for (const problem of problems) say(`FAILED ${problem}`);
  // A full run also holds every case to its floor; a smoke run is cold and short, so only to answering.
  // Against a base build, the floors are those over the base (bench/base-floors.ts); the ratios to the references describe the machine.
  const figures = caseFigures(report.outcomes, judge);
  // A setting's pair (the challenge's cost) runs on this build only: its floor holds with or without a base.
  const ownPairs = new Set(CASES.filter((c) => c.thisBuildOnly).map((c) => c.name));
  const judgedHere = base ? [...against, ...figures.filter((c) => ownPairs.has(c.name))] : figures;
  const over = !judge ? [] : judgedHere.filter((c) => c.result === 'over floor').map((c) => c.name);
  if (judge && report.memory && report.memory.bytesPerRecord > MEMORY_TARGET_BYTES) over.push('memory');
  const tailJudged = tail?.levels.find((l) => l.result !== 'not judged' && l.result !== 'failed');
  if (tailJudged?.result === 'over floor')
    over.push(
      `${tail!.case} p99 at ${Math.round(tailJudged.load * 100)}% (${tailJudged.p99_ms_base} -> ${tailJudged.p99_ms_new} ms)`,
    );
  if (over.length > 0) say(`OVER FLOOR${base ? ` (new / base, bench/base-floors.ts)` : ''}: ${over.join(', ')}`);
  const noisyOf = (list: Array<{ name: string; noisy: boolean; spread: number | null }>) =>
    list.filter((c) => c.noisy).map((c) => `${c.name} (${((c.spread ?? 0) * 100).toFixed(0)}%)`);
  const noisy = !judge ? [] : noisyOf(judgedHere);
  if (noisy.length > 0)
    say(
      `NOISY: the rounds of ${noisy.join(', ')} disagree by more than ${(base ? BASE_NOISY_SPREAD : NOISY_SPREAD) * 100}%${base && noisy.some((n) => ownPairs.has(n.split(' ')[0]!)) ? ` (a setting's pair: ${NOISY_SPREAD * 100}%)` : ''}; rerun on a quieter machine${options.strict ? ' (--strict: exit 1)' : ''}`,
    );
  if (tailJudged?.noisy) {
    noisy.push(`${tail!.case} p99 at ${Math.round(tailJudged.load * 100)}%`);
    say(
      `NOISY: the rounds' p99 ratios at ${Math.round(tailJudged.load * 100)}% load disagree by more than ${TAIL_NOISY_SPREAD * 100}%; rerun on a quieter machine${options.strict ? ' (--strict: exit 1)' : ''}`,
    );
  }
  if (options.jsonFile) {
    const againstJson = base
      ? {
          ref: base.ref,
          commit: base.commit,
          deps: base.deps,
          cases: against,
          memory_bytes_per_code: report.baseMemory ? Number(report.baseMemory.bytesPerRecord.toFixed(1)) : null,
        }
      : undefined;
    writeFileSync(
      options.jsonFile,
      `${JSON.stringify({ ...jsonReport(report.outcomes, report.memory, judge), ...(againstJson ? { against: againstJson } : {}) }, null, 2)}\n`,
    );
    say(`figures written to ${options.jsonFile}`);
  }
  process.exitCode = ok && over.length === 0 && !(options.strict && noisy.length > 0) ? 0 : 1;
}

if (require.main === module) void main();
