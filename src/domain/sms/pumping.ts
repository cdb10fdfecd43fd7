import type { Config } from '../../core/config/schema';
import { apiError, isApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Metrics, SmsCapScope } from '../../core/metrics';
import type { VerifiedHistory } from '../limits/verified-history';
import type { RangeJudging, RangeTally, SmsStore } from './store';

/*
 * SMS pumping defence (docs/security.md, "SMS pumping"). Pumpers ask for codes to numbers they
 * are paid to terminate, in ranges of a few countries, from many addresses, and never verify
 * one. Before any provider is asked:
 *   1. a blocked range (its first `prefix_digits` E.164 digits) is refused outright;
 *   2. the range is judged on its codes whose outcome is known: those sent at least
 *      `judge_after_seconds` ago (a code seconds old has not been verified yet by anyone, so a
 *      burst of real people, or a store just started, is no evidence). A finding is
 *      `block_min_sends` judged codes over the window (this one and the one before) of which
 *      fewer than `block_min_conversion` were verified. A first finding puts the range on
 *      watch; a finding that still holds one grace later blocks it for `block_seconds`;
 *   3. velocity: codes per destination country and per range per hour, the range's cap lowered
 *      to `watch_sends_per_hour` while it is on watch.
 * A verification that brings the range's judged codes back above the threshold ends its watch
 * and lifts its block at once. An operator lifts a block sooner, and the range starts afresh.
 * The allow list of countries is `sms.allowed_regions`, checked by the OTP service before this.
 * `rate_limits.enabled: false` switches this off too: it is an abuse limit like the others.
 *
 * The caps and blocks apply to new numbers. A phone that verified a code within
 * `rate_limits.verified_history_days` (its verified history, the one the bot challenge reads too:
 * src/domain/limits/verified-history.ts, a keyed digest with that lifetime, never the number,
 * recorded by deps.ts) is counted like any other but not refused by them, as a safe list does at the hosted
 * verification services: a campaign that fills a country's cap, or gets a range blocked, must not
 * lock that country's established users out. Its per-phone cooldown and hourly cap (the OTP
 * service's) still hold. Reaching a cap is logged (`sms_cap_reached`), counted
 * (`lfa_sms_cap_reached_total`) and alerted (`SmsCapReached`), once per cap and hour.
 */

const HOUR = 3_600_000;

/** What an operator can do when a cap is reached: in the log line, as in docs/operations.md. */
const CAP_ADVICE: Record<SmsCapScope, string> = {
  country:
    'new numbers to this country are refused until the hour ends; to serve more, raise sms.pumping.country_sends_per_hour (phones verified within rate_limits.verified_history_days are still served)',
  range:
    'new numbers in this range are refused until the hour ends; to serve more, raise sms.pumping.prefix_sends_per_hour (phones verified within rate_limits.verified_history_days are still served)',
};

export interface PumpingDefence {
  readonly enabled: boolean;
  rangeOf(e164: string): string;
  /** Counts a code SMS to `e164` (in `country`) or throws `sms_destination_blocked` / `sms_destination_limited`. */
  admit(e164: string, country: string): Promise<void>;
  /**
   * This phone's destination as the bot challenge reads it (src/domain/limits/challenge.ts), nothing
   * counted: whether its range (in `country`) is blocked or on watch, judged now on its figures,
   * and the code SMS this hour to its range and its country. Judged here too, a range whose bots
   * stopped sending because they cannot solve a challenge is still blocked once its watch has
   * lasted a grace.
   */
  destination(e164: string, country: string): Promise<DestinationState>;
  /** A code sent to this phone (at `sent.at`, now when unknown) was verified: its range converts. */
  verified(e164: string, sent?: { at: number; country: string }): Promise<void>;
  blocks(): Promise<Array<{ range: string; until: number }>>;
  /** An operator lifts a block; false when the range was not blocked. */
  lift(range: string): Promise<boolean>;
}

type DestinationLimit = 'country' | 'prefix' | 'watch';

interface DestinationState {
  /** The range is blocked or on watch. */
  flagged: boolean;
  /** Code SMS this hour to the range, and to the country. */
  rangeSends: number;
  countrySends: number;
}

const destinationLimited = (retryAfter: number, limit: DestinationLimit) =>
  apiError('sms_destination_limited', { params: { retryAfter }, data: { retry_after: retryAfter, limit } });
const destinationBlocked = () => apiError('sms_destination_blocked');

export function createPumpingDefence(
  config: Config,
  store: SmsStore,
  options: {
    now: () => number;
    log: Logger;
    /** Who verified a code lately (verified-history.ts): the caps and blocks spare them. Recorded by deps.ts, not here. */
    history: Pick<VerifiedHistory, 'has'>;
    metrics?: Pick<Metrics, 'smsRefused' | 'smsRangeVerdict' | 'smsCapReached'>;
  },
): PumpingDefence {
  const settings = { ...config.sms.pumping, enabled: config.sms.pumping.enabled && config.rate_limits.enabled };
  const { now, log, metrics } = options;
  // Every allowed country's cap series exists from the start, at 0: its first reaching moves the alert's increase().
  for (const region of config.sms.allowed_regions.length > 0
    ? config.sms.allowed_regions
    : [config.sms.default_region]) {
    for (const scope of ['country', 'range'] as const) metrics?.smsCapReached(scope, region, false);
  }
  const judging: RangeJudging = {
    graceMs: settings.judge_after_seconds * 1000,
    windowMs: settings.block_window_seconds * 1000,
  };
  const rangeOf = (e164: string) => e164.replace(/^\+/, '').slice(0, settings.prefix_digits);
  const finding = (t: RangeTally) =>
    t.sends >= settings.block_min_sends && t.verified / t.sends < settings.block_min_conversion;

  /** Counted, logged with its reason (the range is a prefix, not a recipient), and thrown. */
  const refuse = (
    reason: 'sms_destination_blocked' | 'sms_destination_limited',
    country: string,
    range: string,
    detail: Record<string, unknown>,
    err: Error,
  ): never => {
    metrics?.smsRefused(reason, country);
    log.warn({ event: 'sms_refused', reason, country, range, ...detail }, 'sms refused');
    throw err;
  };

  /** The send that went one over a cap, once per cap and hour whoever sent it: logged (the range is a prefix, not a recipient) and counted. */
  const capReached = (scope: SmsCapScope, country: string, range: string, cap: number) => {
    metrics?.smsCapReached(scope, country);
    log.warn(
      {
        event: 'sms_cap_reached',
        scope,
        country,
        ...(scope === 'range' ? { range } : {}),
        cap,
        advice: CAP_ADVICE[scope],
      },
      `sms ${scope} cap reached`,
    );
  };

  /** Judges the range on its figures: puts it on watch, blocks it (throws), or ends its watch. Answers whether it is on watch. */
  const judge = async (
    range: string,
    country: string,
    judged: RangeTally,
    at: number,
    spared = false,
  ): Promise<boolean> => {
    const figures = { sends: judged.sends, verified: judged.verified };
    if (!finding(judged)) {
      if (judged.watchedSince === null) return false;
      await store.watch(range, null, at, judging);
      metrics?.smsRangeVerdict('cleared', country);
      log.warn(
        { event: 'sms_range_cleared', country, range, ...figures },
        'sms range off watch: its codes are verified',
      );
      return false;
    }
    if (judged.watchedSince === null) {
      await store.watch(range, at, at, judging);
      metrics?.smsRangeVerdict('watched', country);
      log.warn(
        { event: 'sms_range_watched', country, range, ...figures },
        'sms range on watch: its codes are not verified',
      );
      return true;
    }
    // On watch for less than a grace: codes sent when the watch began may still be verified.
    if (at - judged.watchedSince < judging.graceMs) return true;
    const blockedUntil = at + settings.block_seconds * 1000;
    await store.block(range, blockedUntil, at);
    metrics?.smsRangeVerdict('blocked', country);
    log.warn(
      { event: 'sms_range_blocked', country, range, ...figures, until: new Date(blockedUntil).toISOString() },
      'sms range blocked: its codes are not verified',
    );
    // Blocked for new numbers; a phone with a verified history is still served (as a range on watch would serve it).
    if (spared) return true;
    return refuse('sms_destination_blocked', country, range, figures, destinationBlocked());
  };

  return {
    enabled: settings.enabled,
    rangeOf,
    async admit(e164, country) {
      if (!settings.enabled) return;
      const at = now();
      const range = rangeOf(e164);
      // Read before anything is counted: bots pounding a blocked range must not spend their country's cap, which real people share.
      // Read together, one round trip: whether the phone has a verified history, which a block spares.
      const [until, spared] = await Promise.all([store.blockedUntil(range, at), options.history.has(e164)]);
      if (until !== null && !spared)
        refuse(
          'sms_destination_blocked',
          country,
          range,
          { until: new Date(until).toISOString() },
          destinationBlocked(),
        );

      const hour = Math.floor(at / HOUR);
      // Sent together, one round trip: the velocity counters, and this code counted (by its second) in the range's figures.
      const [countrySends, prefixSends, judged] = await Promise.all([
        store.increment(`vel:c:${country}:${hour}`, HOUR, at),
        store.increment(`vel:p:${range}:${hour}`, HOUR, at),
        store.tally(range, at, { kind: 'sent', at }, judging),
      ]);
      try {
        // A spared phone to a range blocked already: nothing to judge (judging would block it again).
        const watched = until !== null || (await judge(range, country, judged, at, spared));
        const retryAfter = Math.max(1, Math.ceil(((hour + 1) * HOUR - at) / 1000));
        // Counted once, by the send that went one over (the counters are atomic, so one send in the fleet sees it).
        if (countrySends === settings.country_sends_per_hour + 1)
          capReached('country', country, range, settings.country_sends_per_hour);
        if (prefixSends === settings.prefix_sends_per_hour + 1)
          capReached('range', country, range, settings.prefix_sends_per_hour);
        // The caps refuse new numbers; a phone with a verified history is counted and served.
        if (spared) return;
        if (countrySends > settings.country_sends_per_hour) {
          refuse(
            'sms_destination_limited',
            country,
            range,
            { limit: 'country', advice: CAP_ADVICE.country },
            destinationLimited(retryAfter, 'country'),
          );
        }
        // A range on watch gets fewer codes until its codes are judged again; before this, a bot
        // challenge was asked of every code to it (challenge.mode adaptive: `destination`).
        const [cap, limit] = watched
          ? [settings.watch_sends_per_hour, 'watch' as const]
          : [settings.prefix_sends_per_hour, 'prefix' as const];
        if (prefixSends > cap)
          refuse(
            'sms_destination_limited',
            country,
            range,
            { limit, ...(limit === 'prefix' ? { advice: CAP_ADVICE.range } : {}) },
            destinationLimited(retryAfter, limit),
          );
      } catch (err) {
        // Refused: no SMS goes out, so the code must not count as one nobody verified.
        await store.tally(range, at, { kind: 'unsent', at }, judging);
        throw err;
      }
    },
    async destination(e164, country) {
      if (!settings.enabled) return { flagged: false, rangeSends: 0, countrySends: 0 };
      const at = now();
      const range = rangeOf(e164);
      const hour = Math.floor(at / HOUR);
      // One round trip of reads: the velocity counters admit() counts, the block, the figures.
      const [until, judged, rangeSends, countrySends] = await Promise.all([
        store.blockedUntil(range, at),
        store.tally(range, at, null, judging),
        store.count(`vel:p:${range}:${hour}`, at),
        store.count(`vel:c:${country}:${hour}`, at),
      ]);
      const state = (flagged: boolean): DestinationState => ({ flagged, rangeSends, countrySends });
      if (until !== null) return state(true);
      // Nothing to judge on a range never watched with no finding: the common case costs the reads.
      if (judged.watchedSince === null && !finding(judged)) return state(false);
      try {
        return state(await judge(range, country, judged, at));
      } catch (err) {
        // Blocked just now: flagged all the more.
        if (isApiError(err) && err.reason === 'sms_destination_blocked') return state(true);
        throw err;
      }
    },
    async verified(e164, sent) {
      if (!settings.enabled) return;
      const at = now();
      const range = rangeOf(e164);
      const judged = await store.tally(range, at, { kind: 'verified', at: sent?.at ?? at }, judging);
      if (judged.watchedSince === null || finding(judged)) return;
      // The range's codes convert again (late verifications): its watch ends and a block on that evidence is lifted at once.
      await store.watch(range, null, at, judging);
      const lifted = await store.unblock(range);
      const country = sent?.country ?? '';
      metrics?.smsRangeVerdict(lifted ? 'unblocked' : 'cleared', country);
      log.warn(
        {
          event: lifted ? 'sms_range_unblocked' : 'sms_range_cleared',
          country,
          range,
          sends: judged.sends,
          verified: judged.verified,
          why: 'converted',
        },
        lifted ? 'sms range block lifted: its codes are verified' : 'sms range off watch: its codes are verified',
      );
    },
    blocks: () => store.blocks(now()),
    async lift(range) {
      const lifted = await store.unblock(range);
      // The range starts afresh: the codes that caused the block must not block it again at once.
      if (lifted) await store.forget(range);
      if (lifted)
        log.warn({ event: 'sms_range_unblocked', range, why: 'operator' }, 'sms range block lifted by an operator');
      return lifted;
    },
  };
}
