import { createHash, createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CaptchaClient } from '../../clients/captcha';
import { budgetOf } from '../../core/address';
import { clientNetwork, clientNetworks, type NetworkTier } from '../../core/client-network';
import type { Config } from '../../core/config/schema';
import type { CallContext } from '../../core/context';
import { apiError, isApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { ChallengeDecision, Metrics } from '../../core/metrics';
import type { RateLimiter } from './rate-limiter';
import { createPow, type Pow, type SolutionFault } from './pow';
import type { VerifiedHistory } from './verified-history';

/*
 * The bot challenge (docs/security.md, "Bot challenge"): one step of the abuse defences, run
 * before every action sends a code or a mail. `challenge.mode` `always` asks it of every such
 * request; `adaptive` only when one of the signals below has crossed its threshold, each counted
 * in the rate limiter's store so they hold across instances:
 *   client_sends          requests to send (codes, subscriptions, password logins) from the client in the window;
 *   client_identifiers    distinct identifiers the client asked for in the window;
 *   client_verify_failures wrong codes from the client in the window;
 *   password_failures     wrong passwords for this email in the window (password login only);
 *   client_refused        the client had a request refused by a limit or a wrong key lately;
 *   network_*             the same four on the wider networks the client sits in (an IPv6 client's
 *                         /56 and /48, an IPv4 client's /24), each with its own thresholds
 *                         (`challenge.network_56`...): crossing one challenges the network's new
 *                         identifiers, not a phone or an email verified lately (verified-history.ts);
 *   range_flagged         the destination phone's range is on watch or blocked (SMS pumping);
 *   range_rate, country_rate  code SMS this hour to the destination's range, or its country, past
 *                         `challenge.destination_share` of its pumping cap (`sms.pumping.*_sends_per_hour`);
 *   range_velocity, country_velocity  new numbers (no verified history) to the destination's range,
 *                         or its country, in the last minute past `challenge.velocity_factor` times
 *                         their average minute over the last `velocity_baseline_hours`, and past a
 *                         floor (`range_velocity_floor`, `country_velocity_floor`): a spike is
 *                         challenged in its first seconds, not at half an hour's cap.
 * A refused request answers `challenge_required` with what to solve in `data.challenge`; it is
 * repeated with the solution in `challenge`. A solution is spent in the store (once, across
 * instances), expires, and holds only for the action and identifier it was issued for.
 * With `rate_limits.enabled: false`, or mode off, nothing is asked or counted.
 */

type ChallengeSignal =
  | 'always'
  | 'client_sends'
  | 'client_identifiers'
  | 'client_verify_failures'
  | 'password_failures'
  | 'client_refused'
  | 'network_sends'
  | 'network_identifiers'
  | 'network_verify_failures'
  | 'network_refused'
  | 'range_flagged'
  | 'range_rate'
  | 'country_rate'
  | 'range_velocity'
  | 'country_velocity';

interface ChallengeAsk {
  /** The action the send serves (`otp_generate`, `FeLogin`...): a solution holds for this one only. */
  action: string;
  /** Who is sent to (the OTP key, the email subscribed or logging in), as canonical: a solution holds for this one only. */
  identifier: string;
  /** The phone a code SMS would go to: its range's pumping verdict is a signal. */
  phone?: string;
  /** A password login: the email's wrong passwords are a signal. */
  password?: boolean;
}

export interface ChallengeGate {
  readonly mode: 'off' | 'adaptive' | 'always';
  /** Lets the request go on, or throws `challenge_required`. The solution is `ctx.challenge`. */
  check(ctx: CallContext, ask: ChallengeAsk): Promise<void>;
  /** A wrong code from this client. */
  verifyFailed(ip: string | undefined): Promise<void>;
  /** A wrong password for this email, from this client. */
  passwordFailed(ip: string | undefined, email: string): Promise<void>;
  /** A request from this client was refused by a limit or a wrong key. */
  refused(ip: string | undefined): Promise<void>;
}

export interface ChallengeGateOptions {
  limiter: RateLimiter;
  now: () => number;
  secret: string;
  log: Logger;
  /** Records a solution's id as spent until a time; false when it already was (the OTP store's proofs). */
  spend(id: string, untilMs: number): Promise<boolean>;
  /** A phone's destination as the pumping defence sees it: its range flagged, the SMS this hour to its range and country. */
  destination?(e164: string): Promise<{ flagged: boolean; rangeSends: number; countrySends: number }>;
  captcha?: CaptchaClient;
  metrics?: Pick<Metrics, 'challenge'>;
  /** Where each decision is kept for operators beside the SMS it saved (the SMS ledger). */
  record?(decision: ChallengeDecision): void;
  /**
   * Who had a code verified lately (verified-history.ts, recorded by deps.ts, shared with the
   * pumping defence): the wider networks' signals challenge only identifiers without one.
   */
  history: Pick<VerifiedHistory, 'has'>;
  /** A phone's destination country (ISO region) and range (the pumping defence's prefix): where the velocity signals count new numbers. */
  placeOf?(e164: string): { country: string; range: string };
}

const challengeRequired = (challenge: Record<string, unknown>, fault?: SolutionFault) =>
  apiError('challenge_required', { data: { challenge, ...(fault ? { solution: fault } : {}) } });

const CLIENT_SIGNALS = ['client_sends', 'client_identifiers', 'client_verify_failures', 'client_refused'] as const;
const NETWORK_SIGNALS = ['network_sends', 'network_identifiers', 'network_verify_failures', 'network_refused'] as const;

/** What the adaptive check found: the signals crossed (the first named), the spike's ratio to its threshold, where a new number counts. */
interface Crossing {
  signals: ChallengeSignal[];
  spike: number;
  places: string[];
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const UNCAPPED = Number.MAX_SAFE_INTEGER;

interface Budget {
  sends: number;
  identifiers: number;
  verify_failures: number;
  refused: number;
}

export function createChallengeGate(config: Config, options: ChallengeGateOptions): ChallengeGate {
  const settings = config.challenge;
  const mode = config.rate_limits.enabled ? (settings.mode ?? 'off') : 'off';
  const { limiter, now, log, metrics } = options;
  const windowMs = settings.window_seconds * 1000;
  const pumping = config.sms.pumping;
  const rangeRate = Math.ceil(settings.destination_share * pumping.prefix_sends_per_hour);
  const countryRate = Math.ceil(settings.destination_share * pumping.country_sends_per_hour);
  // Stryker disable next-line StringLiteral: any label derives a key of its own; nothing outside this gate reads it
  const key = createHmac('sha256', options.secret).update('challenge').digest();
  // An identifier is never in a challenge or a log line: a keyed digest of it is.
  // Stryker disable next-line MethodExpression: the whole digest binds a challenge as well as its first 22 characters
  const digest = (text: string) => createHmac('sha256', key).update(text).digest('base64url').slice(0, 22);
  const pow: Pow | undefined = settings.provider === 'pow' ? createPow(settings, key, now) : undefined;
  // The client's own network (a /64, an IPv4 address): one refusal is enough, as before the wider ones were counted.
  const budgets: Record<NetworkTier, Budget> = {
    client: {
      sends: settings.client_sends,
      identifiers: settings.client_identifiers,
      verify_failures: settings.client_verify_failures,
      refused: 1,
    },
    '56': settings.network_56,
    '48': settings.network_48,
    '24': settings.network_24,
  };

  /** The client signals on one network of the client's, this request counted: those crossed. */
  async function networkCrossed(
    tier: NetworkTier,
    subject: string,
    who: string,
    sends: boolean,
    at: number,
  ): Promise<ChallengeSignal[]> {
    const budget = budgets[tier];
    const decisions = await Promise.all([
      sends ? limiter.hit(`challenge_sends:${subject}`, budget.sends, windowMs, at) : undefined,
      // A new identifier for this network (its first hit in the window) is counted among its identifiers.
      sends
        ? limiter
            .hit(`challenge_seen:${subject}:${who}`, 1, windowMs, at)
            .then((seen) =>
              seen.allowed
                ? limiter.hit(`challenge_ids:${subject}`, budget.identifiers, windowMs, at)
                : limiter.peek(`challenge_ids:${subject}`, budget.identifiers, at),
            )
        : undefined,
      limiter.peek(`challenge_verify_failures:${subject}`, budget.verify_failures - 1, at),
      limiter.peek(`challenge_refused:${subject}`, budget.refused - 1, at),
    ]);
    const names = tier === 'client' ? CLIENT_SIGNALS : NETWORK_SIGNALS;
    return names.filter((_, i) => decisions[i] !== undefined && !decisions[i].allowed);
  }

  const baselineHours = settings.velocity_baseline_hours;
  // A place's baseline is an average over hours: read from the store once a minute per instance, not on every send.
  // Kept by the gate's clock (lru-cache's own ttl would hold a timer): a reading older than a minute is read again.
  const baselines = new LRUCache<string, { baseline: number; until: number }>({ max: 10_000 });
  const baselineOf = async (key: string, hour: number, at: number): Promise<number> => {
    // The baseline is of hours already past, which do not change within the hour its key names: read again or not, it is the same.
    // Stryker disable next-line StringLiteral
    const cached = baselines.get(`${key}:${hour}`);
    // Stryker disable next-line ConditionalExpression,EqualityOperator
    if (cached !== undefined && cached.until > at) return cached.baseline;
    const hours = await Promise.all(
      Array.from({ length: baselineHours }, (_, i) => limiter.peek(`${key}:h${hour - 1 - i}`, UNCAPPED, at)),
    );
    const baseline = hours.reduce((sum, decision) => sum + countOf(decision), 0) / (baselineHours * 60);
    // Stryker disable next-line StringLiteral,ArithmeticOperator: as the read above
    baselines.set(`${key}:${hour}`, { baseline, until: at + MINUTE });
    return baseline;
  };
  /** A counter's count, read from a decision made with no limit. */
  const countOf = (decision: { remaining: number }) => UNCAPPED - decision.remaining;

  /**
   * Counts a new number to `place` and answers its last minute's rate (this one counted) over
   * its threshold: more than 1 is a spike. Every request counts in the minute, so a spike that
   * goes on asking stays one. The last minute is the current minute's count and the
   * previous one's, weighted by what of it is still within a minute (a sliding window from two
   * fixed ones); the baseline is the average minute of the last hours, each hour one counter.
   */
  async function pressureOf(place: string, floor: number, at: number): Promise<number> {
    const minute = Math.floor(at / MINUTE);
    const hour = Math.floor(at / HOUR);
    const key = `challenge_velocity:${place}`;
    const [current, previous, baseline] = await Promise.all([
      limiter.hit(`${key}:m${minute}`, UNCAPPED, 2 * MINUTE, at),
      limiter.peek(`${key}:m${minute - 1}`, UNCAPPED, at),
      baselineOf(key, hour, at),
    ]);
    const rate = countOf(current) + countOf(previous) * (1 - (at % MINUTE) / MINUTE);
    return rate / Math.max(floor, settings.velocity_factor * baseline);
  }

  /**
   * A new number let through unchallenged joins its places' baselines. Only those: a campaign
   * challenged at its spike does not raise the baseline it is judged against next hour.
   */
  const joinBaseline = (places: string[], at: number) => {
    const hour = Math.floor(at / HOUR);
    return Promise.all(
      places.map((place) =>
        limiter.hit(`challenge_velocity:${place}:h${hour}`, UNCAPPED, (baselineHours + 1) * HOUR, at),
      ),
    ).then(() => undefined);
  };

  /** The velocity signals of a new number: its country's and its range's minute against their baselines; the places it counts in. */
  async function velocity(e164: string, at: number): Promise<Pick<Crossing, 'signals' | 'spike' | 'places'>> {
    const place = options.placeOf?.(e164);
    // Stryker disable next-line ArrayDeclaration: with no signal and no place, a made-up place joins a baseline no check reads
    if (!place) return { signals: [], spike: 0, places: [] };
    const places = [`c:${place.country}`, `r:${place.range}`];
    const [country, range] = await Promise.all([
      pressureOf(places[0]!, settings.country_velocity_floor, at),
      pressureOf(places[1]!, settings.range_velocity_floor, at),
    ]);
    const signals: ChallengeSignal[] = [
      ...(range > 1 ? ['range_velocity' as const] : []),
      ...(country > 1 ? ['country_velocity' as const] : []),
    ];
    return { signals, spike: Math.max(country, range), places };
  }

  /**
   * Every signal over its threshold, the first the one named (empty: no challenge). Counts this
   * request on each of the client's networks in one parallel step. A wider network's signals
   * hold for identifiers without a verified history only.
   */
  async function crossed(ctx: CallContext, ask: ChallengeAsk): Promise<Crossing> {
    const at = now();
    // Named as the other limits name their subjects (abuse-limits.ts): every spelling of one inbox is one identifier.
    const who = budgetOf(ask.identifier);
    // A password login sends nothing: it is asked about its failures, not counted among the client's sends.
    const sends = !ask.password;
    // Counted on the client's network, as the abuse limits count it (an IPv6 client's /64), and on the wider ones it sits in.
    const networks = ctx.ip ? clientNetworks(ctx.ip) : [];
    // Asked once, when it matters: a phone to send to (its velocity counts new numbers only), or a wider network crossed.
    let known: Promise<boolean> | undefined;
    const hasHistory = () => (known ??= options.history.has(ask.phone ?? ask.identifier));
    // Stryker disable next-line ConditionalExpression,LogicalOperator: a prefetch of a memoised read; its answer is the same asked now or later
    if (ask.phone && sends) void hasHistory().catch(() => {});
    const perNetwork = await Promise.all(
      networks.map(({ tier, subject }) => networkCrossed(tier, subject, who, sends, at)),
    );
    const signals = perNetwork[0] ?? [];
    const wide = perNetwork.slice(1).flat();
    // A network's neighbours do not cost a person with a history: only its new identifiers prove work.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: with no wide signal there is nothing to push; the check only spares the read
    if (wide.length > 0 && !(await hasHistory())) signals.push(...new Set(wide));
    if (ask.password) {
      const limit = settings.password_failures - 1;
      const ip = networks[0]?.subject;
      const failures = await Promise.all([
        limiter.peek(`challenge_password_failures:${who}`, limit, at),
        ...(ip ? [limiter.peek(`challenge_password_failures:${ip}`, limit, at)] : []),
      ]);
      if (failures.some((decision) => !decision.allowed)) signals.push('password_failures');
    }
    // Stryker disable next-line ArrayDeclaration: as above, with no phone
    if (!ask.phone) return { signals, spike: 0, places: [] };
    const phone = ask.phone;
    // A number with a verified history is no part of a spike of new ones: neither counted nor asked.
    const [destination, rate] = await Promise.all([
      options.destination?.(phone),
      sends ? hasHistory().then((history) => (history ? undefined : velocity(phone, at))) : undefined,
    ]);
    if (destination?.flagged) signals.push('range_flagged');
    if (destination && destination.rangeSends >= rangeRate) signals.push('range_rate');
    if (destination && destination.countrySends >= countryRate) signals.push('country_rate');
    signals.push(...(rate?.signals ?? []));
    // Stryker disable next-line ArrayDeclaration: a number with a history has no velocity places; a made-up one joins a baseline nothing reads
    return { signals, spike: rate?.spike ?? 0, places: rate?.places ?? [] };
  }

  const step = settings.pow_pressure_step;
  const hardest = settings.pow_difficulty * settings.pow_pressure_max;
  /**
   * The proof of work's difficulty under this pressure: `pow_difficulty` for one kind of signal
   * crossed (the client's own, its wider networks', the destination's volume, its velocity...),
   * times `pow_pressure_step` for each other kind crossed with it and for each doubling of a
   * spike past its threshold, up to `pow_pressure_max` times. People behind one NAT crossing
   * their address's signals solve the base difficulty; a campaign crossing its /48's and its
   * country's, or spiking, pays more per send.
   */
  // Stryker disable StringLiteral: a kind's name is only told apart from the others'; any distinct names price the same
  const kindOf = (signal: ChallengeSignal): string => {
    if (signal.startsWith('client_')) return 'client';
    if (signal.startsWith('network_')) return 'network';
    if (signal === 'range_rate' || signal === 'country_rate') return 'rate';
    if (signal === 'range_velocity' || signal === 'country_velocity') return 'velocity';
    return signal;
  };
  // Stryker restore StringLiteral
  const difficultyOf = (crossing: Crossing) => {
    const kinds = new Set(crossing.signals.map(kindOf)).size;
    // Stryker disable next-line EqualityOperator: at a spike of exactly 1, log2 adds 0 either way
    const level = kinds - 1 + (crossing.spike > 1 ? Math.floor(Math.log2(crossing.spike)) : 0);
    return Math.min(hardest, Math.round(settings.pow_difficulty * step ** Math.max(0, level)));
  };

  /** What the caller must solve, bound to this action and identifier. */
  async function issue(
    ctx: CallContext,
    ask: ChallengeAsk,
    id: string,
    difficulty: number,
  ): Promise<Record<string, unknown>> {
    if (pow) return { provider: 'pow', ...(await pow.issue(ask.action, id, difficulty)) };
    // Turnstile renders its widget with an action and customer data, and siteverify echoes both: the token is bound to them.
    return {
      provider: settings.provider,
      site_key: settings.site_key,
      action: ask.action,
      ...(settings.provider === 'turnstile' ? { cdata: id } : {}),
    };
  }

  /** Checks the solution and spends it; answers why it was not taken, or undefined when it was. */
  async function redeem(
    ctx: CallContext,
    ask: ChallengeAsk,
    id: string,
    solution: string,
  ): Promise<SolutionFault | undefined> {
    if (pow) {
      const checked = await pow.verify(solution, ask.action, id);
      if (checked.fault) return checked.fault;
      return (await options.spend(`challenge:${checked.id}`, checked.expiresAt)) ? undefined : 'spent';
    }
    const captcha = options.captcha;
    if (!captcha || solution.length > 4096) return 'malformed';
    let answer;
    try {
      answer = await captcha.verify(ctx, solution);
    } catch (err) {
      // The provider unreachable: the send is refused (a challenge was due), the caller may try again.
      log.warn(
        { event: 'challenge', provider: captcha.provider, err: isApiError(err) ? err.reason : 'error' },
        'challenge: siteverify failed',
      );
      return 'unverified';
    }
    if (!answer.success) return answer.errors.includes('timeout-or-duplicate') ? 'spent' : 'invalid';
    if (captcha.provider === 'turnstile' && (answer.action !== ask.action || answer.cdata !== id)) return 'mismatch';
    const spentId = createHash('sha256').update(solution).digest('base64url');
    return (await options.spend(`challenge:${spentId}`, now() + settings.ttl_seconds * 1000)) ? undefined : 'spent';
  }

  const decided = (
    ctx: CallContext,
    decision: ChallengeDecision,
    crossing: Crossing,
    ask: ChallengeAsk,
    fault?: SolutionFault,
    difficulty?: number,
  ) => {
    const signal = crossing.signals[0]!;
    metrics?.challenge(decision, signal);
    options.record?.(decision);
    // Stryker disable next-line ConditionalExpression: only spares building the line; pino drops it below info either way
    if (log.isLevelEnabled('info')) {
      const asked = difficulty !== undefined && pow ? { difficulty, signals: crossing.signals } : {};
      log.info(
        {
          event: 'challenge',
          decision,
          signal,
          action: ask.action,
          request_id: ctx.requestId,
          ...asked,
          ...(fault ? { fault } : {}),
        },
        `challenge ${decision}`,
      );
    }
  };

  // Requests that already passed: a request that checks before its own work (register) and sends after is asked, and counted, once.
  const passed = new WeakSet<CallContext>();
  return {
    mode,
    async check(ctx, ask) {
      if (mode === 'off' || passed.has(ctx)) return;
      passed.add(ctx);
      const crossing: Crossing =
        mode === 'always'
          ? {
              signals: ['always'],
              spike: 0,
              // Stryker disable next-line ArrayDeclaration: with a signal always crossed, no place is ever joined
              places: [],
            }
          : await crossed(ctx, ask);
      const signal = crossing.signals[0];
      if (!signal) {
        // Never in the request's way: the baseline is an average over hours.
        // Stryker disable next-line ConditionalExpression,EqualityOperator: joining no place does nothing; the check spares the call
        if (crossing.places.length > 0)
          // Stryker disable next-line ArrowFunction: the warning is a log line; a failed join is never in the request's way either way
          joinBaseline(crossing.places, now()).catch((err: unknown) =>
            log.warn(
              { event: 'challenge', err: isApiError(err) ? err.reason : 'error' },
              'challenge: could not count a baseline',
            ),
          );
        return;
      }
      // What a solution is bound to: made only when one is asked for or checked.
      const id = digest(`${ask.action}\n${ask.identifier}`);
      const solution = ctx.challenge;
      // A solution already made is taken at the difficulty it was issued at (signed in it): the pressure prices the next challenge.
      const difficulty = difficultyOf(crossing);
      if (solution === undefined) {
        decided(ctx, 'challenged', crossing, ask, undefined, difficulty);
        throw challengeRequired(await issue(ctx, ask, id, difficulty));
      }
      const fault = await redeem(ctx, ask, id, solution);
      if (!fault) return decided(ctx, 'solved', crossing, ask);
      decided(ctx, 'failed', crossing, ask, fault, difficulty);
      throw challengeRequired(await issue(ctx, ask, id, difficulty), fault);
    },
    async verifyFailed(ip) {
      // Stryker disable next-line ConditionalExpression: outside adaptive mode, or without an address, no check reads these counters
      if (mode !== 'adaptive' || !ip) return;
      const at = now();
      await Promise.all(
        clientNetworks(ip).map(({ subject }) =>
          limiter.hit(`challenge_verify_failures:${subject}`, Number.MAX_SAFE_INTEGER, windowMs, at),
        ),
      );
    },
    async passwordFailed(ip, email) {
      // Stryker disable next-line ConditionalExpression: outside adaptive mode no check reads these counters
      if (mode !== 'adaptive') return;
      const at = now();
      await Promise.all(
        // Stryker disable next-line ArrayDeclaration: without an address there is no client subject; a made-up one is a key no check reads
        [budgetOf(email), ...(ip ? [clientNetwork(ip)] : [])].map((subject) =>
          limiter.hit(`challenge_password_failures:${subject}`, Number.MAX_SAFE_INTEGER, windowMs, at),
        ),
      );
    },
    async refused(ip) {
      // Stryker disable next-line ConditionalExpression: outside adaptive mode, or without an address, no check reads these counters
      if (mode !== 'adaptive' || !ip) return;
      const at = now();
      await Promise.all(
        clientNetworks(ip).map(({ subject }) =>
          limiter.hit(`challenge_refused:${subject}`, Number.MAX_SAFE_INTEGER, settings.refusal_seconds * 1000, at),
        ),
      );
    },
  };
}
