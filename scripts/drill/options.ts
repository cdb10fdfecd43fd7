import { parseArgs } from 'node:util';
import { z } from 'zod';

/** What `npm run drill -- --help` prints. */
export const DRILL_USAGE = `Usage: npm run drill -- [options]

An incident drill for every shipped alert (docs/operations.md, "Incident drill"): for each, the
service on its sandbox with the fault the alert exists for, a real Prometheus (Debian's
prometheus) scraping it every second with ops/prometheus/alerts.yml on a faster clock, and the
time the alert took to fire through Prometheus's alerts API; then ordinary traffic for as long,
on which no alert may fire. One line per alert; exits 1 when an alert stays silent on its fault,
fires late, or fires on healthy traffic.

  --factor <n>        every \`for\` and range window divided by n, 1 to 600 (default 20; --short 60)
  --only <names>      these alerts only, comma-separated (default: every alert of the table)
  --parallel <n>      faults played at once, each on its own service and Prometheus, 1 to 16 (default 3; --short 6)
  --short             the run of the test command: factor 60, more faults at once
  --help              this text
`;

const optionsSchema = z.object({
  factor: z.coerce.number().min(1).max(600),
  only: z.array(z.string().regex(/^[A-Za-z]\w*$/)),
  parallel: z.coerce.number().int().min(1).max(16),
  short: z.boolean(),
});
export type DrillOptions = z.infer<typeof optionsSchema>;

/** A command line the drill cannot run: said in one line, exit 64. */
export class DrillUsageError extends Error {}

export function parseDrillOptions(argv: string[]): DrillOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        factor: { type: 'string' },
        only: { type: 'string' },
        parallel: { type: 'string' },
        short: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    throw new DrillUsageError(`${(err as Error).message.split('. ')[0]}; npm run drill -- --help lists the options`);
  }
  if (values.help) return 'help';
  const short = values.short === true;
  const parsed = optionsSchema.safeParse({
    factor: values.factor ?? (short ? 60 : 20),
    only:
      typeof values.only === 'string'
        ? values.only
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
    parallel: values.parallel ?? (short ? 6 : 3),
    short,
  });
  if (!parsed.success) {
    const name = String(parsed.error.issues[0]!.path[0]);
    throw new DrillUsageError(
      `--${name} ${String(values[name])}: ${RANGES[name] ?? parsed.error.issues[0]!.message}; npm run drill -- --help lists the options`,
    );
  }
  return parsed.data;
}

const RANGES: Record<string, string> = {
  factor: 'a number from 1 to 600',
  only: 'alert names, comma-separated',
  parallel: 'a whole number from 1 to 16',
};
