import { parseArgs } from 'node:util';
import { z } from 'zod';

/** What `npm run soak -- --help` prints. */
export const SOAK_USAGE = `Usage: npm run soak -- [options]

Several instances of the service on one Redis, whole journeys for a fixed time, Redis restarted
and one instance killed partway; exits 1 when a check fails (docs/operations.md, "Soak test").

  --duration <s>      seconds of load, 5 to 3600 (default 60; --smoke 8)
  --instances <n>     service instances, 2 to 8 (default 2)
  --concurrency <n>   journeys running at once, 1 to 64 (default 12; --smoke 6)
  --outage <s>        seconds Redis stays down, 0.5 to 60 (default 3; --smoke 1.5)
  --cluster           a three-master Redis Cluster instead of one Redis
  --smoke             the short run of the test command (about 15 s in all)
  --help              this text
`;

/*
 * `--smoke` is the short run of the test command: a shorter load and a shorter Redis outage, the
 * same faults and the same checks.
 */

const optionsSchema = z.object({
  duration: z.coerce.number().int().min(5).max(3600),
  instances: z.coerce.number().int().min(2).max(8),
  concurrency: z.coerce.number().int().min(1).max(64),
  outage: z.coerce.number().min(0.5).max(60),
  cluster: z.boolean(),
  smoke: z.boolean(),
});

export type SoakOptions = z.infer<typeof optionsSchema>;

/** A command line the soak cannot run: said in one line, with where to look, and exit 64. */
export class SoakUsageError extends Error {}

/** The options, or `help` when the usage was asked; a SoakUsageError names what is wrong. */
export function parseSoakOptions(argv: string[]): SoakOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        duration: { type: 'string' },
        instances: { type: 'string' },
        concurrency: { type: 'string' },
        outage: { type: 'string' },
        cluster: { type: 'boolean', default: false },
        smoke: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    // Node's own wording ("Unknown option '--x'", "Option '--duration <value>' argument missing"), without its error class.
    throw new SoakUsageError(`${(err as Error).message.split('. ')[0]}; npm run soak -- --help lists the options`);
  }
  if (values.help) return 'help';
  const smoke = values.smoke === true;
  const parsed = optionsSchema.safeParse({
    duration: values.duration ?? (smoke ? 8 : 60),
    instances: values.instances ?? 2,
    concurrency: values.concurrency ?? (smoke ? 6 : 12),
    outage: values.outage ?? (smoke ? 1.5 : 3),
    cluster: values.cluster === true,
    smoke,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new SoakUsageError(
      `--${name} ${String(values[name])}: ${RANGES[name] ?? issue.message}; npm run soak -- --help lists the options`,
    );
  }
  return parsed.data;
}

const RANGES: Record<string, string> = {
  duration: 'a whole number of seconds from 5 to 3600',
  instances: 'a whole number from 2 to 8',
  concurrency: 'a whole number from 1 to 64',
  outage: 'seconds from 0.5 to 60',
};
