import type { Config } from '../../core/config/schema';
import { apiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Metrics } from '../../core/metrics';
import type { SmsStore } from './store';

/*
 * SMS pumping defence (docs/security.md, "SMS pumping"). Pumpers ask for codes to numbers they
 * are paid to terminate, in ranges of a few countries, from many addresses, and never verify
 * one. Three checks before any provider is asked, in this order:
 *   1. a blocked range (its first `prefix_digits` E.164 digits) is refused outright;
 *   2. velocity: codes per destination country and per range per hour;
 *   3. conversion: once a range has had `block_min_sends` codes over the window (this one and
 *      the one before, so a campaign slower than the threshold per window is still judged) and
 *      fewer than `block_min_conversion` of them were verified, the range is blocked for
 *      `block_seconds` and this send is refused. An operator lifts a block sooner.
 * The allow list of countries is `sms.allowed_regions`, checked by the OTP service before this.
 * `rate_limits.enabled: false` switches this off too: it is an abuse limit like the others.
 */

const HOUR = 3_600_000;

export interface PumpingDefence {
  readonly enabled: boolean;
  rangeOf(e164: string): string;
  /** Counts a code SMS to `e164` (in `country`) or throws `sms_destination_blocked` / `sms_destination_limited`. */
  admit(e164: string, country: string): Promise<void>;
  /** A code sent to this phone was verified: its range converts. */
  verified(e164: string): Promise<void>;
  blocks(): Promise<Array<{ range: string; until: number }>>;
  /** An operator lifts a block; false when the range was not blocked. */
  lift(range: string): Promise<boolean>;
}

export const destinationLimited = (retryAfter: number, limit: 'country' | 'prefix') =>
  apiError('sms_destination_limited', { params: { retryAfter }, data: { retry_after: retryAfter, limit } });
export const destinationBlocked = () => apiError('sms_destination_blocked');

export function createPumpingDefence(config: Config, store: SmsStore, options: { now: () => number; log: Logger; metrics?: Pick<Metrics, 'smsRefused'> }): PumpingDefence {
  const settings = { ...config.sms.pumping, enabled: config.sms.pumping.enabled && config.rate_limits.enabled };
  const { now, log, metrics } = options;
  const windowMs = settings.block_window_seconds * 1000;
  const rangeOf = (e164: string) => e164.replace(/^\+/, '').slice(0, settings.prefix_digits);

  /** Counted, logged with its reason (the range is a prefix, not a recipient), and thrown. */
  const refuse = (reason: 'sms_destination_blocked' | 'sms_destination_limited', country: string, range: string, detail: Record<string, unknown>, err: Error): never => {
    metrics?.smsRefused(reason, country);
    log.warn({ event: 'sms_refused', reason, country, range, ...detail }, 'sms refused');
    throw err;
  };

  return {
    enabled: settings.enabled,
    rangeOf,
    async admit(e164, country) {
      if (!settings.enabled) return;
      const at = now();
      const range = rangeOf(e164);
      // Read before anything is counted: bots pounding a blocked range must not spend their country's cap, which real people share.
      const until = await store.blockedUntil(range, at);
      if (until !== null) refuse('sms_destination_blocked', country, range, { until: new Date(until).toISOString() }, destinationBlocked());

      const hour = Math.floor(at / HOUR);
      const [countrySends, prefixSends] = await Promise.all([store.increment(`vel:c:${country}:${hour}`, HOUR, at), store.increment(`vel:p:${range}:${hour}`, HOUR, at)]);

      const retryAfter = Math.max(1, Math.ceil(((hour + 1) * HOUR - at) / 1000));
      if (countrySends > settings.country_sends_per_hour) {
        refuse('sms_destination_limited', country, range, { limit: 'country' }, destinationLimited(retryAfter, 'country'));
      }
      if (prefixSends > settings.prefix_sends_per_hour) {
        refuse('sms_destination_limited', country, range, { limit: 'prefix' }, destinationLimited(retryAfter, 'prefix'));
      }

      const window = Math.floor(at / windowMs);
      // Read together: one round trip on the send path.
      const [current, previous, verifiedNow, verifiedBefore, lifted] = await Promise.all([
        store.increment(`conv:s:${range}:${window}`, 2 * windowMs, at),
        store.count(`conv:s:${range}:${window - 1}`, at),
        store.count(`conv:v:${range}:${window}`, at),
        store.count(`conv:v:${range}:${window - 1}`, at),
        store.count(`lifted:${range}`, at),
      ]);
      const earlier = current + previous - 1;
      if (earlier < settings.block_min_sends) return;
      // Lifted by an operator: the sends that caused the block are still in the window, and must not block it again at once.
      if (lifted > 0) return;
      const verified = verifiedNow + verifiedBefore;
      if (verified / earlier >= settings.block_min_conversion) return;
      const blockedUntil = at + settings.block_seconds * 1000;
      await store.block(range, blockedUntil, at);
      log.warn({ event: 'sms_range_blocked', country, range, sends: earlier, verified, until: new Date(blockedUntil).toISOString() }, 'sms range blocked: its codes are not verified');
      refuse('sms_destination_blocked', country, range, { sends: earlier, verified }, destinationBlocked());
    },
    async verified(e164) {
      if (!settings.enabled) return;
      const at = now();
      await store.increment(`conv:v:${rangeOf(e164)}:${Math.floor(at / windowMs)}`, 2 * windowMs, at);
    },
    blocks: () => store.blocks(now()),
    async lift(range) {
      const lifted = await store.unblock(range);
      const at = now();
      if (lifted) await store.increment(`lifted:${range}`, 2 * windowMs, at);
      if (lifted) log.warn({ event: 'sms_range_unblocked', range }, 'sms range block lifted by an operator');
      return lifted;
    },
  };
}
