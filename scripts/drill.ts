import { ALERTS, type FaultName } from './drill/table';
import { expectedSeconds, playFault, playHealthy, type AlertResult } from './drill/run';
import { DRILL_USAGE, DrillUsageError, parseDrillOptions } from './drill/options';

/*
 * npm run drill: an incident drill for every shipped alert (docs/operations.md, "Incident
 * drill"). The faults of the table (scripts/drill/table.ts) are played a few at once, each on its
 * own service, sandbox and Prometheus; then ordinary traffic for as long as the slowest alert
 * had. One line per alert: the fault, the time to fire, silent on healthy traffic.
 */

const say = (line: string) => process.stdout.write(`${line}\n`);

/** Runs `jobs` with at most `limit` at once. */
async function pooled<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

const seconds = (s: number) => `${s.toFixed(1)} s`;

export async function drill(argv: string[]): Promise<number> {
  const options = parseDrillOptions(argv);
  if (options === 'help') {
    say(DRILL_USAGE);
    return 0;
  }
  const unknown = options.only.filter((name) => !ALERTS[name]);
  if (unknown.length > 0)
    throw new DrillUsageError(
      `--only ${unknown.join(',')}: no such alert in the drill's table (${Object.keys(ALERTS).join(', ')})`,
    );
  const chosen = options.only.length > 0 ? options.only : Object.keys(ALERTS);
  const byFault = new Map<FaultName, string[]>();
  for (const alert of chosen) byFault.set(ALERTS[alert]!.fault, [...(byFault.get(ALERTS[alert]!.fault) ?? []), alert]);
  const longest = Math.max(...chosen.map((alert) => expectedSeconds(ALERTS[alert]!, options.factor)));
  say(
    `drill: ${chosen.length} alerts, ${byFault.size} faults, ${options.parallel} at once, for and windows divided by ${options.factor}; then ${seconds(longest)} of healthy traffic`,
  );

  const progress = (r: AlertResult) =>
    say(
      `drill: ${r.alert} ${r.firedAfter === undefined ? `did not fire within ${seconds(r.expected * 2)}` : `fired after ${seconds(r.firedAfter)} (expected within ${seconds(r.expected)})`}`,
    );
  const played = await pooled(
    [...byFault].map(
      ([fault, alerts], lane) =>
        () =>
          playFault(fault, alerts, options.factor, lane + 1, progress),
    ),
    options.parallel,
  );
  say(`drill: healthy traffic for ${seconds(longest)}`);
  const firedWhenHealthy = await playHealthy(longest, options.factor, byFault.size + 1);

  const results = played.flat();
  const width = Math.max(...results.map((r) => r.alert.length));
  let failed = 0;
  for (const r of results.sort((a, b) => chosen.indexOf(a.alert) - chosen.indexOf(b.alert))) {
    const onTime = r.firedAfter !== undefined && r.firedAfter <= r.expected;
    const silent = !firedWhenHealthy.has(r.alert);
    if (!onTime || !silent) failed += 1;
    const fired =
      r.firedAfter === undefined
        ? 'DID NOT FIRE'
        : `${onTime ? 'fired' : 'LATE:'} in ${seconds(r.firedAfter)} (within ${seconds(r.expected)})`;
    say(
      `${r.alert.padEnd(width)}  ${r.fault}: ${fired}; ${silent ? 'silent on healthy traffic' : 'FIRED ON HEALTHY TRAFFIC'}`,
    );
  }
  const stray = [...firedWhenHealthy].filter((a) => !chosen.includes(a));
  for (const alert of stray) say(`${alert.padEnd(width)}  FIRED ON HEALTHY TRAFFIC (not in this drill)`);
  say(
    failed + stray.length === 0
      ? 'drill: every alert fired on its fault and none on healthy traffic'
      : `drill: ${failed + stray.length} alert(s) failed the drill`,
  );
  return failed + stray.length === 0 ? 0 : 1;
}

if (require.main === module) {
  let finished = false;
  // A drill waiting on something that can no longer happen would end with an empty event loop, and exit 0: never a pass.
  process.on('beforeExit', () => {
    if (finished) return;
    process.stderr.write('drill: stalled, nothing left to wait for before the drill ended\n');
    process.exit(1);
  });
  drill(process.argv.slice(2)).then(
    (code) => {
      finished = true;
      process.exit(code);
    },
    (err: unknown) => {
      finished = true;
      process.stderr.write(`drill: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof DrillUsageError ? 64 : 1);
    },
  );
}
