import type { Context } from 'koa';

/*
 * Failures the sandbox's SMS providers can be told to show, so failover can be watched on one
 * machine: `error_5xx` answers 503, `timeout` never answers (the client gives up), `reset`
 * drops the connection. A provider with a fault records nothing in the outbox: what failed
 * was not sent. `undelivered` accepts the message and never delivers it: nothing in the outbox,
 * and a receipt that says failed where the fake sends receipts (twilio). Set by tests
 * (`sandbox.smsFaults`) or by hand, by the provider's name:
 * POST <sandbox upstreams>/faults/sms/<gateway|twilio|twilio-whatsapp|whatsapp>/<fault|none>.
 */

export const SMS_FAULTS = ['none', 'error_5xx', 'timeout', 'reset', 'undelivered'] as const;
export type SmsFault = (typeof SMS_FAULTS)[number];

/**
 * How a phone behaves on the sandbox's WhatsApp: `reads` its messages (the default: sent,
 * delivered, read come back), is `absent` from WhatsApp (the fakes refuse the message, as Meta's
 * 131026 and Twilio's 63003 do), or leaves them `unread` (delivered, never read).
 * POST <sandbox upstreams>/faults/whatsapp/<phone digits>/<reads|absent|unread>.
 */
export const WHATSAPP_STATES = ['reads', 'absent', 'unread'] as const;
export type WhatsAppState = (typeof WHATSAPP_STATES)[number];

export class SmsFaults {
  private readonly faults = new Map<string, SmsFault>();
  private readonly whatsapp = new Map<string, WhatsAppState>();

  /** How the phone (any spelling: its digits count) behaves on WhatsApp from now on. */
  setWhatsApp(phone: string, state: WhatsAppState): void {
    const digits = phone.replace(/\D/g, '');
    if (state === 'reads') this.whatsapp.delete(digits);
    else this.whatsapp.set(digits, state);
  }

  whatsAppState(phone: string): WhatsAppState {
    return this.whatsapp.get(phone.replace(/\D/g, '')) ?? 'reads';
  }

  set(provider: string, fault: SmsFault): void {
    if (fault === 'none') this.faults.delete(provider);
    else this.faults.set(provider, fault);
  }

  /** Every provider working again. */
  clear(): void {
    this.faults.clear();
    this.whatsapp.clear();
  }

  get(provider: string): SmsFault {
    return this.faults.get(provider) ?? 'none';
  }

  /** Shows the provider's fault on this request; true when it did (the fake then does nothing more). */
  async show(provider: string, ctx: Context): Promise<boolean> {
    const fault = this.get(provider);
    // Accepted as usual: the fake itself leaves it out of the outbox (undelivered).
    if (fault === 'none' || fault === 'undelivered') return false;
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
