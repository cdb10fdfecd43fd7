import type { Config, PhoneChannel } from '../../core/config/schema';
import { apiError } from '../../core/errors';
import type { Ledger } from './ledger';
import type { LedgerEntry } from './store';

/*
 * Which channels a phone's code is tried on, in order (docs/sms.md, "Channels"): the region's
 * `sms.channels` (or `default`, or `sms`), the caller's choice first where `sms.channel_choice`
 * allows one, and WhatsApp moved out of the way when the last WhatsApp message to this phone
 * did not arrive: a failed receipt, or no `read` within `sms.receipts.timeout_seconds`.
 * The router (router.ts) then walks the channels, so a refusal falls back within the request.
 */

interface ChannelPlan {
  /** The channels to try, in order. */
  channels: PhoneChannel[];
  /** The channel this phone would get first had nothing gone wrong: the answer says `fallback` when the code went by another. */
  preferred: PhoneChannel;
}

export interface ChannelPlanner {
  /** The configured channels of a region, in order. */
  configured(region: string): readonly PhoneChannel[];
  /** Throws `invalid_request` naming `field` for a channel the caller may not choose for this region. */
  check(region: string, requested: PhoneChannel | undefined, field: string): void;
  plan(e164: string, region: string, requested?: PhoneChannel): Promise<ChannelPlan>;
}

export function createChannelPlanner(
  config: Config,
  ledger: Pick<Ledger, 'latest' | 'stateOf'>,
  now: () => number,
): ChannelPlanner {
  const table = config.sms.channels;
  const configured = (region: string): readonly PhoneChannel[] =>
    table[region.toUpperCase()] ?? table.DEFAULT ?? ['sms'];

  /** A WhatsApp message that did not reach its reader: failed, or not read once its receipt is late. */
  const unread = (entry: LedgerEntry) =>
    entry.channel === 'whatsapp' &&
    entry.verified_at === undefined &&
    (entry.failed_at !== undefined ||
      (entry.read_at === undefined && entry.receipt_due_at !== undefined && now() >= entry.receipt_due_at));

  const planner: ChannelPlanner = {
    configured,
    check(region, requested, field) {
      if (requested === undefined) return;
      const refuse = (message: string) => {
        throw apiError('invalid_request', { data: { issues: [{ path: field, message }] } });
      };
      if (!config.sms.channel_choice) refuse('the channel is chosen by the service here');
      const offered = configured(region);
      if (!offered.includes(requested)) refuse(`not offered for this number: ${offered.join(', ')}`);
    },
    async plan(e164, region, requested) {
      const offered = configured(region);
      if (requested !== undefined) {
        // Asked for by the person ("send it on WhatsApp"): tried first, whatever the last message did.
        return { channels: [requested, ...offered.filter((c) => c !== requested)], preferred: requested };
      }
      const preferred = offered[0]!;
      if (!offered.includes('whatsapp') || offered.length < 2) return { channels: [...offered], preferred };
      const last = await ledger.latest(e164);
      return {
        channels: last && unread(last) ? [...offered.filter((c) => c !== 'whatsapp'), 'whatsapp'] : [...offered],
        preferred,
      };
    },
  };
  return planner;
}
