import type { Context, Next } from 'koa';

/*
 * Failures any fake upstream can be told to show, by the first segment of its path (`idp`,
 * `collector`, `feeds`, `mailing-list`, `recommendations`, `captcha`, ...), so an incident can be
 * played on one machine (npm run drill): `error_5xx` answers 503, `timeout` never answers (the
 * client gives up at its timeout), `slow` answers as usual after `ms` milliseconds (1000 unless
 * given). POST <sandbox upstreams>/faults/upstream/<segment>/<fault|none>[?ms=<delay>]. The SMS
 * providers have their own switches (sms-faults.ts).
 */

export const UPSTREAM_FAULTS = ['none', 'error_5xx', 'timeout', 'slow'] as const;
export type UpstreamFault = (typeof UPSTREAM_FAULTS)[number];

export class UpstreamFaults {
  private readonly faults = new Map<string, { fault: Exclude<UpstreamFault, 'none'>; ms: number }>();

  set(segment: string, fault: UpstreamFault, ms = 1000): void {
    if (fault === 'none') this.faults.delete(segment);
    else this.faults.set(segment, { fault, ms });
  }

  clear(): void {
    this.faults.clear();
  }

  /** Koa middleware before the fakes' routes: a faulted upstream shows its fault instead of (or before) answering. */
  readonly middleware = async (ctx: Context, next: Next): Promise<void> => {
    const segment = ctx.path.split('/')[1] ?? '';
    const shown = segment === 'faults' ? undefined : this.faults.get(segment);
    if (!shown) return next();
    if (shown.fault === 'error_5xx') {
      ctx.status = 503;
      ctx.body = { error: 'sandbox fault: unavailable' };
    } else if (shown.fault === 'timeout') {
      // No answer at all, until the client gives up and closes the connection.
      await new Promise((resolve) => ctx.req.socket.once('close', resolve));
    } else {
      await new Promise((resolve) => setTimeout(resolve, shown.ms).unref());
      await next();
    }
  };
}
