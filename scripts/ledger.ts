import type { LedgerGroup, DeliveryState } from '../src/domain/sms/ledger';
import type { BreakerState } from '../src/domain/sms/breaker';
import type { PhoneChannel } from '../src/core/config/schema';
import type { NotSentReason } from '../src/domain/sms/store';
import { readablePercent, readableTime, type TextLocale } from '../src/core/text-locale';
import { GROUP_COLUMNS, SMS_TEXTS } from '../src/http/sms-texts';
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
  type OperatorKey,
} from './lib/service';

/*
 * `npm run ledger -- --since 1h`: the SMS ledger of a running service in the terminal, the same
 * report as its /sms page (docs/sms.md), in the same words: sends and what became of them,
 * conversion by country and provider, the ranges the pumping defence blocked, the providers'
 * circuits and whether they post receipts. `--help` lists every option; the service and the
 * language are found, and the key read, as every operator command does (scripts/lib/service.ts).
 */

export interface LedgerOptions {
  sinceSeconds: number;
  url: string;
  locale: TextLocale;
  /** The operator's key and where it was found (--key, the environment, CONFIG_FILE). */
  key?: OperatorKey;
  lift?: string;
  json: boolean;
}

export interface LedgerReport {
  since: string;
  totals: LedgerGroup[];
  blocks: Array<{ range: string; until: string }>;
  challenges?: { challenged: number; solved: number; failed: number };
  logins?: { code: number; passkey: number; sms_saved: number };
  by_channel?: LedgerGroup[];
  /** Messages no provider took, per provider, channel and reason. */
  not_sent?: Array<{ provider: string; channel: LedgerGroup['channel']; reason: NotSentReason; count: number }>;
  breakers: Array<{ provider: string; channel?: PhoneChannel; state: BreakerState; receipts: boolean }>;
  entries?: Array<{ state: DeliveryState }>;
}

export const LEDGER_COMMAND = {
  usage: 'npm run ledger -- [--since 24h] [--lift <range>] [--json] [--key <key>] [--url <base>] [--locale it|en]',
  summary: {
    it: 'Il registro degli SMS di un servizio in funzione, come la sua pagina /sms.',
    en: 'The SMS ledger of a running service, as its /sms page shows it.',
  },
  options: {
    since: {
      type: 'string',
      value: '<n><s|m|h|d>',
      help: { it: 'quanto indietro (predefinito 24h)', en: 'how far back (default 24h)' },
    },
    key: {
      type: 'string',
      value: '<key>',
      help: {
        it: 'x-internal-key (altrimenti $SECURITY__INTERNAL_KEY, $INTERNAL_KEY, o security.internal_key nel CONFIG_FILE; la sandbox non ne vuole)',
        en: 'x-internal-key (else $SECURITY__INTERNAL_KEY, $INTERNAL_KEY, or security.internal_key in CONFIG_FILE; the sandbox needs none)',
      },
    },
    lift: {
      type: 'string',
      value: '<range>',
      help: {
        it: 'toglie il blocco di una numerazione (le sue cifre) invece',
        en: 'lift the pumping block of a range (its digits) instead',
      },
    },
    json: { type: 'boolean', help: { it: 'il registro in JSON', en: 'the report as JSON' } },
  },
} satisfies CommandSpec<Record<string, CommandOption>>;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const DURATION_HINT: Record<TextLocale, (text: string) => string> = {
  it: (text) => `--since: "${text}" non è una durata come 90m, 1h o 7d`,
  en: (text) => `--since: "${text}" is not a duration such as 90m, 1h or 7d`,
};

export function parseDuration(text: string, locale: TextLocale = 'en'): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match || Number(match[1]) === 0) throw new CommandError(DURATION_HINT[locale](text));
  return Number(match[1]) * UNITS[match[2] || 's']!;
}

/** The options, or the --help text. */
export function parseLedgerArgs(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): LedgerOptions | { help: string } {
  const command = readCommand(LEDGER_COMMAND, argv, env);
  if ('help' in command) return command;
  const { values, url, locale } = command;
  const key = operatorKey(values.key, env, { locale });
  return {
    sinceSeconds: values.since === undefined ? 86400 : parseDuration(values.since, locale),
    url,
    locale,
    ...(key ? { key } : {}),
    ...(values.lift !== undefined ? { lift: values.lift } : {}),
    json: values.json ?? false,
  };
}

const pad = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '))
    .join('\n');
};

/** The report in the words of the /sms page, in `locale`, times as local times. */
export function formatLedger(report: LedgerReport, locale: TextLocale): string {
  const t = SMS_TEXTS[locale];
  const lines = [`${t.title} · ${t.since(readableTime(report.since, locale))}`, ''];
  if (report.totals.length === 0) lines.push(t.nothingSent);
  else {
    const header = [
      t.columns.country,
      t.columns.provider,
      t.columns.channel,
      ...GROUP_COLUMNS.map((c) => t.columns[c]),
      t.columns.conversion,
    ];
    const rows = report.totals.map((g) => [
      g.country || '-',
      g.provider,
      g.channel,
      ...GROUP_COLUMNS.map((c) => String(g[c])),
      readablePercent(g.conversion, locale),
    ]);
    lines.push(pad([header, ...rows]), '', t.legend);
    if (report.by_channel?.length) {
      const channelHeader = [
        t.columns.country,
        t.columns.channel,
        '',
        ...GROUP_COLUMNS.map((c) => t.columns[c]),
        t.columns.conversion,
      ];
      const channelRows = report.by_channel.map((g) => [
        g.country || '-',
        g.channel,
        '',
        ...GROUP_COLUMNS.map((c) => String(g[c])),
        readablePercent(g.conversion, locale),
      ]);
      lines.push('', `${t.byChannel}:`, pad([channelHeader, ...channelRows]));
    }
  }
  if (report.not_sent) {
    lines.push('', `${t.notSentHeading}:`);
    lines.push(
      ...(report.not_sent.length === 0
        ? [`  ${t.noneNotSent}`]
        : report.not_sent.map(
            (row) =>
              `  ${row.provider || '-'} (${t.channelNames[row.channel]}): ${row.count} · ${t.notSentReasons[row.reason]}`,
          )),
    );
  }
  lines.push('', `${t.blocksHeading}:`);
  lines.push(
    ...(report.blocks.length === 0
      ? [`  ${t.noBlocks}`]
      : report.blocks.map((b) => `  ${t.block(b.range, readableTime(b.until, locale))}`)),
  );
  if (report.challenges) lines.push('', `${t.challengesHeading}:`, `  ${t.challenges(report.challenges)}`);
  if (report.logins) lines.push('', `${t.loginsHeading}:`, `  ${t.logins(report.logins)}`);
  lines.push('', `${t.providersHeading}:`);
  lines.push(
    ...report.breakers.map(
      (b) =>
        `  ${b.provider} (${t.channelNames[b.channel ?? 'sms']}): ${t.circuit[b.state]}; ${t.receipts(b.receipts)}`,
    ),
  );
  return lines.join('\n');
}

/** What the command prints for these options (a CommandError for a refusal or no answer). */
export async function ledgerOutput(options: LedgerOptions): Promise<string> {
  const headers = keyHeaders(options.key);
  const { status, body } = options.lift
    ? await callService<{ success: boolean; error?: string; data: unknown }>(options, '/_sms/blocks/lift', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ range: options.lift }),
      })
    : await callService<{ success: boolean; error?: string; data: unknown }>(
        options,
        `/_sms/ledger?since=${options.sinceSeconds}`,
        { headers },
      );
  if (!body.success) throw refusal(options, status, body, options.key);
  if (options.lift) return JSON.stringify(body.data);
  return options.json ? JSON.stringify(body.data, null, 2) : formatLedger(body.data as LedgerReport, options.locale);
}

async function main(): Promise<void> {
  const options = parseLedgerArgs(process.argv.slice(2));
  console.log('help' in options ? options.help : await ledgerOutput(options));
}

if (require.main === module) runCommand('ledger', main);
