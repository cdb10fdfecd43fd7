import type { Context } from 'koa';

/*
 * Failures the sandbox's SMS providers can be told to show, so failover can be watched on one
 * machine: `error_5xx` answers 503, `timeout` never answers (the client gives up), `reset`
 * drops the connection. A provider with a fault records nothing in the outbox: what failed
 * was not sent. Set by tests (`sandbox.smsFaults`) or by hand:
 * POST <sandbox upstreams>/faults/sms/<gateway|twilio>/<fault|none>.
 */

export const SMS_FAULTS = ['none', 'error_5xx', 'timeout', 'reset'] as const;
export type SmsFault = (typeof SMS_FAULTS)[number];

export class SmsFaults {
  private readonly faults = new Map<string, SmsFault>();

  set(provider: string, fault: SmsFault): void {
    if (fault === 'none') this.faults.delete(provider);
    else this.faults.set(provider, fault);
  }

  /** Every provider working again. */
  clear(): void {
    this.faults.clear();
  }

  get(provider: string): SmsFault {
    return this.faults.get(provider) ?? 'none';
  }

  /** Shows the provider's fault on this request; true when it did (the fake then does nothing more). */
  async show(provider: string, ctx: Context): Promise<boolean> {
    const fault = this.get(provider);
    if (fault === 'none') return false;
    if (fault === 'error_5xx') {
      ctx.status = 503;
      ctx.body = { error: 'sandbox fault: unavailable' };
    } else if (fault === 'reset') {
      ctx.req.socket.destroy();
    } else {
      // No answer at all, until the client gives up and closes the connection.
      await new Promise((resolve) => ctx.req.socket.once('close', resolve));
    }
    return true;
  }
}
