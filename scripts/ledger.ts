/*
 * `npm run ledger -- --since 1h`: the SMS ledger of a running service in the terminal, the same
 * report as its /sms page (docs/sms.md): sends, deliveries, failures and conversion by country
 * and provider, the ranges the pumping defence blocked, the providers' circuits.
 *
 *   --since <n><s|m|h|d>   how far back (default 24h)
 *   --url <base>           the service (default $LEDGER_URL, else http://127.0.0.1:8080)
 *   --key <internal key>   x-internal-key (default $SECURITY__INTERNAL_KEY; the sandbox needs none)
 *   --lift <range>         lift the pumping block of a range (its digits) instead
 *   --json                 the report as JSON
 */

import type { LedgerGroup } from '../src/domain/sms/ledger';

export interface LedgerOptions {
  sinceSeconds: number;
  url: string;
  key?: string;
  lift?: string;
  json: boolean;
}

export interface LedgerReport {
  since: string;
  totals: LedgerGroup[];
  blocks: Array<{ range: string; until: string }>;
  breakers: Array<{ provider: string; state: string }>;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

export function parseDuration(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match || Number(match[1]) === 0) throw new Error(`--since: "${text}" is not a duration such as 90m, 1h or 7d`);
  return Number(match[1]) * UNITS[match[2] || 's']!;
}

export function parseLedgerArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): LedgerOptions {
  const options: LedgerOptions = { sinceSeconds: 86400, url: env.LEDGER_URL || 'http://127.0.0.1:8080', key: env.SECURITY__INTERNAL_KEY || undefined, json: false };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--since') options.sinceSeconds = parseDuration(value());
    else if (arg === '--url') options.url = value().replace(/\/+$/, '');
    else if (arg === '--key') options.key = value();
    else if (arg === '--lift') options.lift = value();
    else if (arg === '--json') options.json = true;
    else throw new Error(`unknown option ${arg} (--since, --url, --key, --lift, --json)`);
  }
  return options;
}

const pad = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
};

export function formatLedger(report: LedgerReport): string {
  const lines = [`SMS ledger since ${report.since}`, ''];
  if (report.totals.length === 0) lines.push('No code sent in this period.');
  else {
    const header = ['country', 'provider', 'channel', 'sent', 'delivered', 'failed', 'no receipt', 'verified', 'conversion'];
    const rows = report.totals.map((g) => [g.country || '-', g.provider, g.channel, ...[g.sent, g.delivered, g.failed, g.unknown, g.verified].map(String), `${(g.conversion * 100).toFixed(1)}%`]);
    lines.push(pad([header, ...rows]));
  }
  lines.push('', report.blocks.length === 0 ? 'Blocked ranges: none' : `Blocked ranges: ${report.blocks.map((b) => `+${b.range}… until ${b.until}`).join(', ')}`);
  lines.push(`Providers: ${report.breakers.map((b) => `${b.provider} ${b.state}`).join(', ') || 'none'}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseLedgerArgs(process.argv.slice(2));
  const headers: Record<string, string> = options.key ? { 'x-internal-key': options.key } : {};
  const response = options.lift
    ? await fetch(`${options.url}/_sms/blocks/lift`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ range: options.lift }) })
    : await fetch(`${options.url}/_sms/ledger?since=${options.sinceSeconds}`, { headers });
  const body = (await response.json()) as { success: boolean; error?: string; data: unknown };
  if (!body.success) throw new Error(`${response.status}: ${body.error ?? 'refused'} (an operator's report: --key or SECURITY__INTERNAL_KEY)`);
  if (options.lift) console.log(JSON.stringify(body.data));
  else console.log(options.json ? JSON.stringify(body.data, null, 2) : formatLedger(body.data as LedgerReport));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(`ledger: ${(err as Error).message}`);
    process.exit(1);
  });
}
