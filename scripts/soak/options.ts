import { parseArgs } from 'node:util';
import { z } from 'zod';

/*
 * `npm run soak -- [--duration S] [--instances N] [--concurrency N] [--cluster] [--smoke]`.
 * `--smoke` is the short run of the test command (about 15 s in all): a shorter load and a
 * shorter Redis outage, the same faults and the same checks.
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

export function parseSoakOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      instances: { type: 'string' },
      concurrency: { type: 'string' },
      outage: { type: 'string' },
      cluster: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const smoke = values.smoke ?? false;
  return optionsSchema.parse({
    duration: values.duration ?? (smoke ? 8 : 60),
    instances: values.instances ?? 2,
    concurrency: values.concurrency ?? (smoke ? 6 : 12),
    outage: values.outage ?? (smoke ? 1.5 : 3),
    cluster: values.cluster ?? false,
    smoke,
  });
}
