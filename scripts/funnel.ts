import { durationMs } from '../src/http/funnel';
import type { FunnelStats, ScreenFigures } from '../src/domain/funnel/figures';
import {
  journeyName,
  percent,
  refusalText,
  repeatsText,
  screenName,
  seconds,
  stillThere,
} from '../src/domain/funnel/words';
import type { TextLocale } from '../src/core/text-locale';
import { JOURNEY_IDS } from '../machines';
import {
  CommandError,
  callService,
  keyHeaders,
  operatorKey,
  readCommand,
  refusal,
  runCommand,
  type CommandOption,
  type CommandSpec,
} from './lib/service';

/*
 * `npm run funnel -- --since 24h [--journey phone-login]` (`--help`: every option): the
 * journey funnel in the terminal, read from a running service's GET /flows/stats (docs/funnel.md),
 * so it shows the same figures as the page, summed over every instance that shares the store.
 * The service is found, and the key read, as every operator command does (scripts/lib/service.ts):
 * `--key` (which lands in the shell's history), the environment (SECURITY__INTERNAL_KEY,
 * INTERNAL_KEY, FUNNEL_KEY: `funnel.read_key`), CONFIG_FILE.
 */

export const FUNNEL_COMMAND = {
  usage: 'npm run funnel -- [--since 24h] [--journey <name>] [--key <key>] [--url <base>] [--locale it|en]',
  summary: {
    it: 'Il funnel dei percorsi di un servizio in funzione (GET /flows/stats).',
    en: 'The journey funnel of a running service (GET /flows/stats).',
  },
  options: {
    since: {
      type: 'string',
      value: '<90m|24h|7d>',
      help: { it: 'quanto indietro (predefinito 24h)', en: 'how far back (default 24h)' },
    },
    journey: {
      type: 'string',
      value: '<name>',
      help: { it: 'un solo percorso (phone-login, ...)', en: 'one journey only (phone-login, ...)' },
    },
    key: {
      type: 'string',
      value: '<key>',
      help: {
        it: 'x-internal-key (resta nella cronologia della shell; altrimenti $SECURITY__INTERNAL_KEY, $INTERNAL_KEY, $FUNNEL_KEY, o security.internal_key o funnel.read_key nel CONFIG_FILE)',
        en: 'x-internal-key (it stays in the shell history; else $SECURITY__INTERNAL_KEY, $INTERNAL_KEY, $FUNNEL_KEY, or security.internal_key or funnel.read_key in CONFIG_FILE)',
      },
    },
  },
} satisfies CommandSpec<Record<string, CommandOption>>;

/*
 * One language per report, every figure spelled as the pages spell it (src/domain/funnel/words.ts):
 * percentages, durations, refusals in product's words, the screens' and journeys' names in the
 * report's language. Names are never cut: the column fits the longest.
 */
const WORDS = {
  it: {
    range: (from: string, to: string, resolution: string) =>
      `[${from}, ${to}) (intervalli di ${resolution === 'minute' ? 'un minuto' : 'un’ora'}; persone, ogni percorso nel periodo in cui è iniziato)`,
    journey: (started: number, completed: number, rate: string, median: string, p90: string) =>
      `partiti ${started}, arrivati alla fine ${completed} (${rate}), tempo per finire mediana ${median} p90 ${p90}`,
    turnedAway: (n: number, reasons: string) => `  respinti all'ingresso ${n}${reasons ? `: ${reasons}` : ''}`,
    columns: [
      'schermata',
      'arrivati',
      'proseguono',
      'altrove',
      'in corso',
      'si fermano',
      'finiscono',
      'ripetute',
      'mediana',
      'p90',
      'errori',
    ],
    split: 'si dividono',
  },
  en: {
    range: (from: string, to: string, resolution: string) =>
      `[${from}, ${to}) (${resolution} buckets; people, each journey in the range where it started)`,
    journey: (started: number, completed: number, rate: string, median: string, p90: string) =>
      `started ${started}, completed ${completed} (${rate}), time to complete median ${median} p90 ${p90}`,
    turnedAway: (n: number, reasons: string) => `  turned away at the door ${n}${reasons ? `: ${reasons}` : ''}`,
    columns: [
      'screen',
      'arrived',
      'went on',
      'elsewhere',
      'open',
      'stopped',
      'completed',
      'repeats',
      'median',
      'p90',
      'refusals',
    ],
    split: 'split',
  },
} as const;

export function renderFunnel(stats: FunnelStats, locale: TextLocale = 'it'): string {
  const words = WORDS[locale];
  const lines = [words.range(stats.from, stats.to, stats.resolution)];
  const names = stats.journeys.flatMap((journey) =>
    (journey.screens as ScreenFigures[]).map((s) => screenName(s, locale)),
  );
  const widths = [Math.max(words.columns[0].length, ...names.map((n) => n.length)), 9, 15, 10, 9, 15, 11, 28, 9, 9];
  const row = (cells: string[]) =>
    `  ${cells.map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell)).join(' ')}`.trimEnd();
  for (const journey of stats.journeys) {
    lines.push(
      '',
      `${journeyName(journey, locale)}: ${words.journey(journey.started, journey.completed, percent(journey.completionRate, locale), seconds(journey.median_complete_seconds), seconds(journey.p90_complete_seconds))}`,
    );
    if (journey.turnedAway > 0)
      lines.push(
        words.turnedAway(
          journey.turnedAway,
          journey.turnedAwayReasons.map((r) => refusalText(r, 0, locale)).join('; '),
        ),
      );
    lines.push(row([...words.columns]));
    for (const s of journey.screens as ScreenFigures[]) {
      const going = s.arrived > s.completed;
      lines.push(
        row([
          screenName(s, locale),
          String(s.arrived),
          going ? `${s.continued} ${percent(s.conversion, locale)}` : '–',
          going ? String(s.elsewhere) : '–',
          going ? String(s.inProgress) : '–',
          going ? `${s.stopped} ${percent(s.dropOff, locale)}` : '–',
          s.last ? String(s.completed) : '–',
          s.repeats > 0 ? repeatsText(s.repeats, s.repeatedPeople, locale) : '0',
          seconds(s.median_seconds),
          seconds(s.p90_seconds),
          s.refusals.map((r) => refusalText(r, s.arrived, locale)).join('; '),
        ]),
      );
      const ways = s.split.filter((w) => w.people > 0);
      if (ways.length > 1) {
        // The step is the title's (`90 · …`): the screen may be another journey's, not in this report.
        const where = (w: (typeof ways)[number]) =>
          w.to === null
            ? stillThere(locale)
            : `→ ${screenName({ state: w.to, step: /^(\w+) · /.exec(w.title)?.[1] ?? null, title: w.title }, locale)}`;
        lines.push(`    ${words.split}: ${ways.map((w) => `${where(w)}: ${w.people}`).join(', ')}`);
      }
    }
  }
  return lines.join('\n');
}

const UNKNOWN_JOURNEY: Record<TextLocale, (given: string) => string> = {
  it: (given) => `--journey ${given}: nessun percorso con questo nome; ci sono ${JOURNEY_IDS.join(', ')}`,
  en: (given) => `--journey ${given}: no journey of that name; there are ${JOURNEY_IDS.join(', ')}`,
};

/** What the command prints for these arguments (a CommandError for what is wrong, the key named only when it was refused). */
export async function funnelOutput(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const command = readCommand(FUNNEL_COMMAND, argv, env);
  if ('help' in command) return command.help;
  const since = command.values.since ?? '24h';
  if (durationMs(since) === undefined)
    throw new CommandError(`--since ${since}: give minutes, hours or days (90m, 24h, 7d)`);
  const journey = command.values.journey;
  // Named here, before any call: the journeys are the machines', whatever the service's answer.
  if (journey !== undefined && !(JOURNEY_IDS as readonly string[]).includes(journey))
    throw new CommandError(UNKNOWN_JOURNEY[command.locale](journey));
  const key = operatorKey(command.values.key, env, { funnel: true, locale: command.locale });
  const query = new URLSearchParams({ since, ...(journey ? { journey } : {}) });
  const { status, body } = await callService<{ success: boolean; error: string | null; data: FunnelStats }>(
    command,
    `/flows/stats?${query}`,
    { headers: keyHeaders(key) },
  );
  if (!body.success) throw refusal(command, status, body, key, { funnel: true });
  return renderFunnel(body.data, command.locale);
}

async function main(argv: readonly string[]): Promise<void> {
  process.stdout.write(`${await funnelOutput(argv)}\n`);
}

if (require.main === module) runCommand('funnel', () => main(process.argv.slice(2)));
