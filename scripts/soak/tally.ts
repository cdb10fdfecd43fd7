/*
 * What the soak counts while it runs, and the checks it makes at the end. Journeys end in one
 * of three ways: completed (step 90 reached), interrupted (a step met a fault: a 503 during the
 * Redis outage or a connection cut by the killed instance, and the journey could not go on),
 * or failed (it went wrong with no fault to explain it: a check fails).
 */

const JOURNEY_KINDS = [
  'phone_login',
  'email_login',
  'phone_registration',
  'email_registration',
  'wrong_code',
  'resend',
] as const;
export type JourneyKind = (typeof JOURNEY_KINDS)[number];

/** How long after Redis answers again a 503 `store_unavailable` is still expected: ioredis reconnects with a backoff of at most 2 s. */
const OUTAGE_TAIL_MS = 5_000;

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export class Tally {
  readonly startedAt = Date.now();
  journeys = { started: 0, completed: 0, interrupted: 0, failed: 0 };
  readonly byKind = new Map<JourneyKind, { started: number; completed: number }>(
    JOURNEY_KINDS.map((k) => [k, { started: 0, completed: 0 }]),
  );
  /** Why failed journeys failed, with a count each (the first few examples are kept). */
  readonly failures = new Map<string, number>();
  readonly failureExamples: string[] = [];
  codes = { accepted: 0, doubleAccepted: 0, wrongAccepted: 0 };
  requests = { sent: 0, answered: 0, connectionErrors: 0, timeouts: 0, outage503: 0, unexpected: 0 };
  readonly unexpectedExamples: string[] = [];
  /** Honest journeys asked to solve the bot challenge at least once, and the solutions they gave. */
  challenge = { journeysChallenged: 0, solved: 0 };
  private readonly latencies: number[] = [];

  /** The Redis outage: when Redis was stopped and when it answered PING again. */
  redisDownAt?: number;
  redisUpAt?: number;
  firstSuccessAfterReturn?: number;
  instanceKilledAt?: number;

  journeyStarted(kind: JourneyKind): void {
    this.journeys.started += 1;
    this.byKind.get(kind)!.started += 1;
  }

  journeyCompleted(kind: JourneyKind): void {
    this.journeys.completed += 1;
    this.byKind.get(kind)!.completed += 1;
  }

  journeyInterrupted(): void {
    this.journeys.interrupted += 1;
  }

  journeyFailed(kind: JourneyKind, why: string, detail: string): void {
    this.journeys.failed += 1;
    const key = `${kind}: ${why}`;
    this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    if (this.failureExamples.length < 5) this.failureExamples.push(`${key} (${detail})`);
  }

  /** A 503 `store_unavailable` is expected from the moment Redis stops until shortly after it answers again. */
  inOutage(sentAt: number, answeredAt: number): boolean {
    if (this.redisDownAt === undefined || answeredAt < this.redisDownAt) return false;
    return this.redisUpAt === undefined || sentAt <= this.redisUpAt + OUTAGE_TAIL_MS;
  }

  answered(sentAt: number, answeredAt: number, success: boolean): void {
    this.requests.answered += 1;
    this.latencies.push(answeredAt - sentAt);
    if (
      success &&
      this.redisUpAt !== undefined &&
      this.firstSuccessAfterReturn === undefined &&
      sentAt >= this.redisUpAt
    ) {
      this.firstSuccessAfterReturn = answeredAt;
    }
  }

  unexpected(description: string): void {
    this.requests.unexpected += 1;
    if (this.unexpectedExamples.length < 5) this.unexpectedExamples.push(description);
  }

  /** Seconds from Redis's return to the first successful answer to a request sent after it. */
  recoverySeconds(): number | undefined {
    if (this.redisUpAt === undefined || this.firstSuccessAfterReturn === undefined) return undefined;
    return (this.firstSuccessAfterReturn - this.redisUpAt) / 1000;
  }

  latency(): { p50: number; p99: number } {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  }

  progressLine(elapsedS: number, durationS: number, codesIssued: number, state: string): string {
    const { p50, p99 } = this.latency();
    const j = this.journeys;
    const r = this.requests;
    return `soak: ${elapsedS.toFixed(0).padStart(3)}/${durationS} s | journeys ${j.started} started, ${j.completed} completed, ${j.interrupted} interrupted, ${j.failed} failed | codes ${codesIssued} issued, ${this.codes.accepted} accepted | requests ${r.answered} answered, ${r.outage503} 503 in outage, ${r.connectionErrors} cut, ${r.unexpected} unexpected | p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms | ${state}`;
  }
}

/** The documented ceiling of SMS a pumping campaign may cost one range (docs/security.md, "SMS pumping"). */
const PUMPING_SMS_CEILING = 25;

/** What the pumping campaign beside the journeys saw (scripts/soak/pumping.ts). */
export interface PumpingFigures {
  asked: number;
  blocked: number;
  /** sms.pumping.block_min_sends of the run. */
  minSends: number;
  /**
   * Seconds into the campaign by which its range must have been blocked: when it had its
   * `minSends` SMS, plus the grace before they are judged and the grace on watch (and a margin).
   * Unset while it had fewer.
   */
  blockDueAfterSeconds?: number;
  /** Seconds the campaign ran. */
  ranSeconds?: number;
  /** Seconds from the campaign's start to when its range was first seen blocked (a refusal `sms_destination_blocked`, or the ledger's blocks). */
  blockedAfterSeconds?: number;
  /** Its answers `challenge_required` (the campaign never solves one); unset when the challenge was off. */
  challenged?: number;
  /** SMS to the range when the campaign was first challenged (unset: never challenged). */
  smsBeforeChallenge?: number;
  firstChallengeAfterSeconds?: number;
}

/** A bot that never solves the challenge, from one client address (scripts/soak/bots.ts). */
export interface NonSolverFigures {
  asked: number;
  challenged: number;
  /** SMS it got before its first challenge, and after it (must be 0). */
  smsBefore: number;
  smsAfter: number;
  firstChallengeAfterSeconds?: number;
  /** The most SMS it may get before a signal crosses: challenge.client_identifiers, one number each. */
  allowedBefore: number;
}

/** A bot that solves every challenge it is asked (scripts/soak/bots.ts). */
export interface SolverFigures {
  asked: number;
  challenged: number;
  /** SMS it got unasked (before its signals crossed), and with a solution. */
  smsFree: number;
  smsPaid: number;
  solves: number;
  /** CPU its solutions cost, user and system (scripts/soak/solver.ts). */
  cpuMs: number;
}

/** The bot challenge in `adaptive` mode, as the soak met it. */
export interface ChallengeFigures {
  flood: NonSolverFigures;
  solver: SolverFigures;
  /** The bot from one /48 rotating its /64s (its allowedBefore: challenge.network_48.identifiers). */
  slash48?: NonSolverFigures;
}

/** Honest journeys must be asked to solve in under this share of journeys (the issue's bar). */
const HONEST_CHALLENGED_CEILING = 0.01;

const percent = (n: number, of: number) => (of === 0 ? 0 : (100 * n) / of);
const ms = (value: number) => value.toFixed(value < 10 ? 1 : 0);

export interface Verdict {
  lines: string[];
  violations: string[];
  last: string;
}

/** The final report: the figures, each "must be" check, and the closing line. */
export function verdict(
  tally: Tally,
  figures: {
    codesIssued: number;
    ingestsExpected: number;
    lostIngests: number;
    redisRestarted: boolean;
    instanceReplaced: boolean;
    /** The pumping campaign beside the journeys (scripts/soak/pumping.ts), when it ran. */
    pumping?: PumpingFigures & { smsSpent: number };
    /** The bots beside it and the challenge's toll on the journeys, when the challenge was on. */
    challenge?: ChallengeFigures;
  },
): Verdict {
  const { p50, p99 } = tally.latency();
  const recovery = tally.recoverySeconds();
  const j = tally.journeys;
  const r = tally.requests;
  const lines = [
    `journeys: ${j.started} started, ${j.completed} completed, ${j.interrupted} interrupted by a fault, ${j.failed} failed`,
    ...[...tally.byKind].map(([kind, n]) => `  ${kind}: ${n.started} started, ${n.completed} completed`),
    `codes: ${figures.codesIssued} issued, ${tally.codes.accepted} accepted, ${tally.codes.doubleAccepted} accepted twice, ${tally.codes.wrongAccepted} wrong or replaced codes accepted`,
    `ingests: ${figures.ingestsExpected} logins answered with a token, ${figures.lostIngests} never reached the collector`,
    `requests: ${r.sent} sent, ${r.answered} answered, ${r.outage503} answered 503 store_unavailable during the Redis outage, ${r.connectionErrors} cut at the connection (killed instance), ${r.timeouts} timed out, ${r.unexpected} unexpected answers`,
    `latency: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    `recovery: ${recovery === undefined ? 'no success after Redis returned' : `first success ${recovery.toFixed(2)} s after Redis returned`}`,
    ...[...tally.failures].map(([why, n]) => `failed journey: ${why} x${n}`),
    ...tally.failureExamples.map((e) => `  e.g. ${e}`),
    ...tally.unexpectedExamples.map((e) => `unexpected answer: ${e}`),
    ...(figures.pumping
      ? [
          `pumping: ${figures.pumping.asked} codes asked to one range, ${figures.pumping.smsSpent} SMS spent on it, ${figures.pumping.blocked} refused as blocked${figures.pumping.blockedAfterSeconds === undefined ? '' : `, the range blocked ${figures.pumping.blockedAfterSeconds.toFixed(1)} s into the campaign`}`,
          ...(figures.challenge ? [pumpingChallengeLine(figures.pumping)] : []),
        ]
      : []),
    ...(figures.challenge ? challengeLines(tally, figures.challenge) : []),
  ];
  const violations: string[] = [];
  const mustBeZero = (name: string, n: number) => n !== 0 && violations.push(`${name}: ${n} (must be 0)`);
  mustBeZero('codes accepted twice', tally.codes.doubleAccepted);
  mustBeZero('wrong or replaced codes accepted', tally.codes.wrongAccepted);
  mustBeZero('lost ingests', figures.lostIngests);
  mustBeZero('unexpected answers (not the envelope, or a 5xx other than 503 during the Redis outage)', r.unexpected);
  mustBeZero('requests timed out', r.timeouts);
  mustBeZero('journeys failed without a fault', j.failed);
  if (j.completed === 0) violations.push('no journey completed');
  if (!figures.redisRestarted) violations.push('Redis was not restarted');
  if (!figures.instanceReplaced) violations.push('no instance was killed and replaced');
  if (recovery === undefined) violations.push('no success after Redis returned');
  if (figures.pumping) {
    const { asked, smsSpent, blockDueAfterSeconds, blockedAfterSeconds, ranSeconds } = figures.pumping;
    if (smsSpent >= PUMPING_SMS_CEILING)
      violations.push(`pumping: ${smsSpent} SMS spent on the pumped range (must be under ${PUMPING_SMS_CEILING})`);
    // Only a campaign that ran past the time its block was due must have met it (the graces, or a Redis outage, may eat the rest of a short run).
    const due = blockDueAfterSeconds !== undefined && (ranSeconds ?? 0) >= blockDueAfterSeconds;
    if (due && blockedAfterSeconds === undefined)
      violations.push(
        `pumping: ${asked} codes asked, ${smsSpent} SMS spent, ${ranSeconds!.toFixed(0)} s, and the range never blocked (due after ${blockDueAfterSeconds.toFixed(0)} s)`,
      );
  }
  if (figures.challenge) violations.push(...challengeViolations(tally, figures.challenge, figures.pumping));
  const last = `soak: ${j.started} journeys, ${tally.codes.doubleAccepted} double-accepted, ${figures.lostIngests} lost ingests, ${r.unexpected} unexpected 5xx, recovered in ${recovery === undefined ? 'never' : recovery.toFixed(2)} s${figures.challenge ? `; ${challengeSummary(tally, figures.challenge, figures.pumping)}` : ''}`;
  return { lines, violations, last };
}

const cpuPerSms = (solver: SolverFigures) =>
  solver.smsPaid === 0 ? 'no SMS paid for' : `${ms(solver.cpuMs / solver.smsPaid)} ms CPU per SMS`;

/** SMS the bots that never solve got after they were first challenged: the campaign's (its range's SMS since) and the flood's. */
function nonSolverSms(
  challenge: ChallengeFigures,
  pumping?: PumpingFigures & { smsSpent: number },
): { before: number; after: number } {
  const campaignBefore = pumping ? (pumping.smsBeforeChallenge ?? pumping.smsSpent) : 0;
  const campaignAfter = pumping ? pumping.smsSpent - campaignBefore : 0;
  const slash48 = challenge.slash48 ?? { smsBefore: 0, smsAfter: 0 };
  return {
    before: campaignBefore + challenge.flood.smsBefore + slash48.smsBefore,
    after: campaignAfter + challenge.flood.smsAfter + slash48.smsAfter,
  };
}

function pumpingChallengeLine(pumping: PumpingFigures & { smsSpent: number }): string {
  if (pumping.smsBeforeChallenge === undefined) return `  challenge: never asked of the campaign (it never solves one)`;
  return `  challenge: ${pumping.challenged ?? 0} of its requests asked to solve one (it never does), the first ${pumping.firstChallengeAfterSeconds!.toFixed(1)} s into the campaign; ${pumping.smsBeforeChallenge} SMS before it, ${pumping.smsSpent - pumping.smsBeforeChallenge} after`;
}

function challengeLines(tally: Tally, { flood, solver, slash48 }: ChallengeFigures): string[] {
  const { journeysChallenged, solved } = tally.challenge;
  const started = tally.journeys.started;
  return [
    `challenge: ${journeysChallenged} of ${started} journeys asked to solve one (${percent(journeysChallenged, started).toFixed(2)} %), ${solved} solutions given`,
    `flood from one client (never solves): ${flood.asked} codes asked, ${flood.challenged} challenged${flood.firstChallengeAfterSeconds === undefined ? '' : `, the first ${flood.firstChallengeAfterSeconds.toFixed(1)} s in`}; ${flood.smsBefore} SMS before its first challenge, ${flood.smsAfter} after`,
    ...(slash48
      ? [
          `bot from one /48, a new /64 every 3 requests (never solves): ${slash48.asked} codes asked, ${slash48.challenged} challenged${slash48.firstChallengeAfterSeconds === undefined ? '' : `, the first ${slash48.firstChallengeAfterSeconds.toFixed(1)} s in`}; ${slash48.smsBefore} SMS before its first challenge, ${slash48.smsAfter} after`,
        ]
      : []),
    `bot that solves: ${solver.asked} codes asked, ${solver.challenged} challenged, ${solver.solves} solved; ${solver.smsFree} SMS unasked, ${solver.smsPaid} paid with ${ms(solver.cpuMs)} ms of CPU: ${cpuPerSms(solver)}`,
  ];
}

function challengeViolations(
  tally: Tally,
  challenge: ChallengeFigures,
  pumping?: PumpingFigures & { smsSpent: number },
): string[] {
  const violations: string[] = [];
  const { journeysChallenged } = tally.challenge;
  const started = tally.journeys.started;
  if (journeysChallenged >= HONEST_CHALLENGED_CEILING * started) {
    violations.push(
      `challenge: ${journeysChallenged} of ${started} journeys asked to solve one, ${percent(journeysChallenged, started).toFixed(2)} % (must be under ${100 * HONEST_CHALLENGED_CEILING} %)`,
    );
  }
  const { flood } = challenge;
  if (flood.smsAfter !== 0)
    violations.push(
      `challenge: the flood from one client got ${flood.smsAfter} SMS after its first challenge, never solving one (must be 0)`,
    );
  if (flood.smsBefore > flood.allowedBefore)
    violations.push(
      `challenge: the flood from one client got ${flood.smsBefore} SMS before it was challenged (must be at most ${flood.allowedBefore}, one per identifier under challenge.client_identifiers)`,
    );
  const { slash48 } = challenge;
  if (slash48 && slash48.smsAfter !== 0)
    violations.push(
      `challenge: the bot from one /48 got ${slash48.smsAfter} SMS after its first challenge, never solving one (must be 0)`,
    );
  if (slash48 && slash48.smsBefore > slash48.allowedBefore)
    violations.push(
      `challenge: the bot from one /48 got ${slash48.smsBefore} SMS before it was challenged (must be at most ${slash48.allowedBefore}, challenge.network_48.identifiers)`,
    );
  if (pumping?.smsBeforeChallenge !== undefined && pumping.smsSpent > pumping.smsBeforeChallenge) {
    violations.push(
      `challenge: the pumping campaign got ${pumping.smsSpent - pumping.smsBeforeChallenge} SMS after its first challenge, never solving one (must be 0)`,
    );
  }
  return violations;
}

/** The challenge's figures on the closing line: honest journeys asked, the bots that never solve, the price for the one that does. */
function challengeSummary(
  tally: Tally,
  challenge: ChallengeFigures,
  pumping?: PumpingFigures & { smsSpent: number },
): string {
  const { journeysChallenged } = tally.challenge;
  const { before, after } = nonSolverSms(challenge, pumping);
  return `challenged ${journeysChallenged} journeys (${percent(journeysChallenged, tally.journeys.started).toFixed(2)} %), non-solving bots ${before} SMS before the challenge and ${after} after, solving bot ${cpuPerSms(challenge.solver)}`;
}
