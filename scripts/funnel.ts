import { durationMs } from '../src/http/funnel';
import type { FunnelStats, ScreenFigures } from '../src/flows/funnel-figures';
import { callService, readCommand, runCommand, type CommandOption, type CommandSpec } from './lib/service';

/*
 * `npm run funnel -- --since 24h [--journey phone-login]` (`--help`: every option): the
 * journey funnel in the terminal, read from a running service's GET /flows/stats (docs/funnel.md),
 * so it shows the same figures as the page, summed over every instance that shares the store.
 * The service is found as every operator command finds it (scripts/lib/service.ts).
 * The key comes from the environment (FUNNEL_KEY: `funnel.read_key`, or INTERNAL_KEY), never
 * from the command line, where it would land in the shell's history.
 */

export const FUNNEL_COMMAND = {
  usage: 'npm run funnel -- [--since 24h] [--journey <name>] [--url <base>] [--locale it|en]',
  summary: {
    it: 'Il funnel dei percorsi di un servizio in funzione (GET /flows/stats); la chiave da FUNNEL_KEY o INTERNAL_KEY.',
    en: 'The journey funnel of a running service (GET /flows/stats); the key from FUNNEL_KEY or INTERNAL_KEY.',
  },
  options: {
    since: { type: 'string', value: '<90m|24h|7d>', help: { it: 'quanto indietro (predefinito 24h)', en: 'how far back (default 24h)' } },
    journey: { type: 'string', value: '<name>', help: { it: 'un solo percorso (phone-login, ...)', en: 'one journey only (phone-login, ...)' } },
  },
} satisfies CommandSpec<Record<string, CommandOption>>;

const pct = (v: number | null) => (v === null ? '–' : `${(v * 100).toFixed(1)}%`);
const secs = (v: number | null) => (v === null ? '–' : `≤${v}s`);
const pad = (text: string, width: number) => (text.length >= width ? text.slice(0, width) : text + ' '.repeat(width - text.length));

export function renderFunnel(stats: FunnelStats): string {
  const lines = [`[${stats.from}, ${stats.to}) (${stats.resolution} buckets; people, each journey in the range where it started)`];
  const head = `  ${pad('screen', 44)} ${pad('arrived', 8)} ${pad('on', 14)} ${pad('elsewhere', 9)} ${pad('open', 6)} ${pad('stopped', 14)} ${pad('completed', 10)} ${pad('repeats', 8)} ${pad('median', 7)} ${pad('p90', 7)} refusals (people/requests)`;
  for (const journey of stats.journeys) {
    lines.push('', `${journey.title}: started ${journey.started}, completed ${journey.completed} ${pct(journey.completionRate)}, time to complete median ${secs(journey.medianCompleteSeconds)} p90 ${secs(journey.p90CompleteSeconds)}`, head);
    for (const s of journey.screens as ScreenFigures[]) {
      const going = s.arrived > s.completed;
      const refusals = s.refusals.map((r) => `${r.reason} ${r.people}/${r.count}`).join(', ');
      lines.push(
        `  ${pad(s.title, 44)} ${pad(String(s.arrived), 8)} ${pad(going ? `${s.continued} ${pct(s.conversion)}` : '–', 14)} ${pad(going ? String(s.elsewhere) : '–', 9)} ${pad(going ? String(s.inProgress) : '–', 6)} ${pad(going ? `${s.stopped} ${pct(s.dropOff)}` : '–', 14)} ${pad(s.last ? String(s.completed) : '–', 10)} ${pad(String(s.repeats), 8)} ${pad(secs(s.medianSeconds), 7)} ${pad(secs(s.p90Seconds), 7)} ${refusals}`,
      );
      const ways = s.split.filter((w) => w.people > 0);
      if (ways.length > 1) lines.push(`    split: ${ways.map((w) => `${w.to === null ? w.title : `→ ${w.title}`}: ${w.people}`).join(', ')}`);
    }
  }
  return lines.join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const command = readCommand(FUNNEL_COMMAND, argv);
  if ('help' in command) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  const since = command.values.since ?? '24h';
  if (durationMs(since) === undefined) {
    process.stderr.write(`--since ${since}: give minutes, hours or days (90m, 24h, 7d)\n`);
    return 2;
  }
  const query = new URLSearchParams({ since, ...(command.values.journey ? { journey: command.values.journey } : {}) });
  const headers: Record<string, string> = {};
  if (process.env.FUNNEL_KEY) headers['x-funnel-key'] = process.env.FUNNEL_KEY;
  if (process.env.INTERNAL_KEY) headers['x-internal-key'] = process.env.INTERNAL_KEY;
  const { status, body } = await callService<{ success: boolean; error: string | null; data: FunnelStats }>(command, `/flows/stats?${query}`, { headers });
  if (!body.success) {
    process.stderr.write(`${command.url}: ${status} ${body.error ?? ''} (FUNNEL_KEY, INTERNAL_KEY)\n`);
    return 1;
  }
  process.stdout.write(`${renderFunnel(body.data)}\n`);
  return 0;
}

if (require.main === module) runCommand('funnel', () => main(process.argv.slice(2)));
