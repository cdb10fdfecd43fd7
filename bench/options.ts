import { CASES, REF_NODE_HTTP } from './cases';

/** What `npm run bench -- --help` prints: the command line of `npm run bench`. */
export const BENCH_USAGE = `Usage: npm run bench -- [options]

Each case of the service under load beside a reference that does the same I/O, reported as the
service's own work per request (docs/performance.md).

  --smoke             every case once for about a second, each reference once for all, no
                      warm-up, fewer records for the memory figure; exits 1 unless every case
                      answered with no failure (CI)
  --rounds <n>        paired rounds per case: its reference, then the case (default 3; smoke 1)
  --duration <s>      measured seconds per run (default 4; smoke 1)
  --warmup <s>        unmeasured seconds before each run (default 1; smoke 0), and four
                      times as long before the first round of each service case
  --connections <n>   concurrent connections (default 50)
  --records <n>       pending codes for the memory figure (default 1000000; smoke 100000)
  --cases <a,b,...>   only these cases (names as in the table, \`memory\` for the memory figure;
                      \`ref_node_http_call\` alone runs only that reference; the baseline
                      always runs)
  --skip-redis        skip the Redis cases (without it, a missing redis-server is an error
                      that says how to install it); \`--no-redis\` is the same
  --strict            exit 1 when a ratio's rounds spread by more than 15% (NOISY); with
                      --against, also when a case's own work over the base's is above its
                      floor (bench/base-floors.ts) or its rounds spread by more than 10%, or
                      the login pair's p99 ratio at 90% load spreads by more than 20%
  --against <ref>     also run every service case on the build of <ref> (a commit, branch or
                      tag; \`perf-base\` is the commit bench/perf-base holds), checked out in a
                      temporary worktree with its own \`npm ci\` (kept per lock file), the two
                      builds alternating round by round on fresh instances; reports each
                      one's own µs and their ratio (new / base) with its spread
  --no-pin            do not pin processes to CPUs (by default, with taskset and 2+ CPUs, the
                      app under load gets CPU 0 and everything else the other CPUs)
  --json <file>       also write the figures as JSON (baseline, every case with its multiple,
                      ratio, ratio_to, spread, references, floor and result; the memory per
                      pending code; \`tail\`: the login pair's p50/p99 paced at 50% and 90% of
                      its saturating rate, per build)
  --profile <dir>     run each service case in its own process with the V8 CPU profiler (the
                      one --cpu-prof starts) around its measured window only, write the
                      profiles to <dir> and print where each one's time went
  --help              this text
`;

/** What `--cases` may name: the cases, the node:http reference and the memory figure (the baseline always runs). */
const CASE_NAMES: readonly string[] = [...CASES.map((c) => c.name), REF_NODE_HTTP.name, 'memory'];

export interface BenchOptions {
  smoke: boolean;
  rounds: number;
  strict: boolean;
  duration: number;
  warmup: number;
  connections: number;
  records: number;
  cases: string[] | null;
  redis: boolean;
  pin: boolean;
  profileDir: string | null;
  jsonFile: string | null;
  /** The ref to measure this checkout against (`--against`), as given. */
  against: string | null;
  /** `--help`: print BENCH_USAGE and measure nothing. */
  help: boolean;
}

export class UsageError extends Error {}

const positive = (name: string, raw: string | undefined, integer: boolean): number => {
  const value = Number(raw);
  if (raw === undefined || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name} needs a ${integer ? 'whole ' : ''}number, got ${raw ?? 'nothing'}`);
  }
  return value;
};

export function parseOptions(argv: readonly string[]): BenchOptions {
  const smoke = argv.includes('--smoke');
  const options: BenchOptions = {
    smoke,
    rounds: smoke ? 1 : 3,
    strict: false,
    duration: smoke ? 1 : 4,
    warmup: smoke ? 0 : 1,
    connections: 50,
    records: smoke ? 100_000 : 1_000_000,
    cases: null,
    redis: true,
    pin: true,
    profileDir: null,
    jsonFile: null,
    against: null,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--smoke':
        break;
      case '--help':
      case '-h':
        options.help = true;
        break;
      case '--duration':
        options.duration = positive(flag, value(), false);
        break;
      case '--warmup':
        options.warmup = positive(flag, value(), false);
        break;
      case '--connections':
        options.connections = Math.max(1, positive(flag, value(), true));
        break;
      case '--records':
        options.records = Math.max(1, positive(flag, value(), true));
        break;
      case '--cases': {
        const cases = (value() ?? '')
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean);
        const unknown = cases.filter((c) => !CASE_NAMES.includes(c));
        if (cases.length === 0 || unknown.length > 0)
          throw new UsageError(
            `--cases takes names among ${CASE_NAMES.join(', ')}${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''}`,
          );
        options.cases = cases;
        break;
      }
      case '--skip-redis':
      case '--no-redis':
        options.redis = false;
        break;
      case '--strict':
        options.strict = true;
        break;
      case '--rounds':
        options.rounds = Math.max(1, positive(flag, value(), true));
        break;
      case '--no-pin':
        options.pin = false;
        break;
      case '--json':
        options.jsonFile = value() ?? null;
        if (!options.jsonFile) throw new UsageError('--json needs a file');
        break;
      case '--against':
        options.against = value() ?? null;
        if (!options.against || options.against.startsWith('-'))
          throw new UsageError('--against needs a git ref (a commit, branch or tag) or perf-base');
        break;
      case '--profile':
        options.profileDir = value() ?? null;
        if (!options.profileDir) throw new UsageError('--profile needs a directory');
        break;
      default:
        throw new UsageError(`unknown option ${arg}; npm run bench -- --help lists the options`);
    }
  }
  if (options.duration <= 0) throw new UsageError('--duration must be above 0');
  return options;
}
