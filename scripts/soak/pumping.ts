import { randomInt } from 'node:crypto';
import { post, reasonOf } from './client';
import type { Fleet } from './fleet';
import type { PumpingFigures, Tally } from './tally';
import type { SoakOutbox } from './upstreams';

/*
 * An SMS pumping campaign beside the journeys (docs/security.md, "SMS pumping"): a bot asks
 * for codes to random numbers of one premium-looking British range, one a second over the
 * fleet, and never verifies one. The fleet shares the defence's figures in Redis, so the range
 * must be blocked, whichever instances the bot reaches, once its sms.pumping.block_min_sends SMS
 * were judged (a grace after they were sent) and a grace on watch has passed; the journeys (all
 * Italian) must never be refused for it. At one a second it costs about
 * SOAK_BLOCK_MIN_SENDS + the grace in seconds, SMS: at ten, the graces alone would cost 70, over
 * the ceiling the campaign of the simulation keeps (test/security/sms-pumping.test.ts).
 *
 * Each request comes from another address, as from a bot farm, so no client signal of the bot
 * challenge (`adaptive`) crosses: the campaign is challenged once its range is on watch
 * (`range_flagged`), never solves, and must get no SMS after its first challenge. The challenge
 * comes before the block, so a blocked range answers it too: the block is read from the
 * ledger's blocks (`/_sms/ledger`, with the internal key).
 */

export const PUMPED_RANGE = '+4475206';
const INTERVAL_MS = 1000;
/** The soak's sms.pumping.block_min_sends and judge_after_seconds: low enough that even the smoke run's short campaign may meet the block. */
export const SOAK_BLOCK_MIN_SENDS = 5;
/**
 * The instances judge codes this old (production: 60). Journeys type their code within a second,
 * but none can be verified while Redis is down, nor until their instance has reconnected (its
 * back-off reaches 2 s): a grace shorter than that judges honest codes nobody could verify and
 * puts the journeys' range on watch. It failed one smoke run in a few at 2 s with a 1.5 s outage,
 * and at 4 s on a machine loaded five times over (journeys' p99 2.8 s): 8 s leaves that margin.
 */
export const soakJudgeAfterSeconds = (outageSeconds: number): number => Math.ceil(outageSeconds) + 8;
/** The block is due two graces and a second after the last SMS of the minimum; this much more for a busy machine. */
const BLOCK_MARGIN_SECONDS = 5;
/** How often the ledger is asked whether the range is blocked, once the campaign is challenged. */
const LEDGER_POLL_MS = 2_000;

/** The campaign's n-th address: one each, from 172.16.0.0/12. */
const addressOf = (n: number) => `172.${16 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;

export class Pumping {
  readonly figures: PumpingFigures = { asked: 0, blocked: 0, minSends: SOAK_BLOCK_MIN_SENDS, challenged: 0 };
  private spent = 0;
  private ledgerAskedAt = 0;

  constructor(
    private readonly tally: Tally,
    private readonly fleet: Fleet,
    private readonly judgeAfterSeconds: number,
    private readonly outbox: SoakOutbox,
    private readonly internalKey: string,
  ) {}

  async run(until: number): Promise<void> {
    const started = Date.now();
    const since = () => (Date.now() - started) / 1000;
    while (Date.now() < until) {
      const number = `${PUMPED_RANGE}${String(randomInt(100_000)).padStart(5, '0')}`;
      this.figures.asked += 1;
      const outcome = await post(
        this.tally,
        this.fleet.next().url,
        'otp_generate',
        { uid: number },
        addressOf(this.figures.asked),
      );
      const elapsed = since();
      this.figures.ranSeconds = elapsed;
      if (outcome.kind === 'answer' && outcome.envelope.success === true && ++this.spent === SOAK_BLOCK_MIN_SENDS) {
        this.figures.blockDueAfterSeconds = elapsed + 2 * this.judgeAfterSeconds + 1 + BLOCK_MARGIN_SECONDS;
      }
      const reason = outcome.kind === 'answer' ? reasonOf(outcome.envelope) : undefined;
      if (reason === 'sms_destination_blocked') {
        this.figures.blocked += 1;
        this.figures.blockedAfterSeconds ??= elapsed;
      }
      if (reason === 'challenge_required') {
        this.figures.challenged! += 1;
        this.figures.firstChallengeAfterSeconds ??= elapsed;
        this.figures.smsBeforeChallenge ??= this.outbox.codesTo(PUMPED_RANGE);
      }
      if (
        this.figures.challenged! > 0 &&
        this.figures.blockedAfterSeconds === undefined &&
        Date.now() - this.ledgerAskedAt >= LEDGER_POLL_MS
      ) {
        this.ledgerAskedAt = Date.now();
        if (await this.rangeBlocked()) this.figures.blockedAfterSeconds = since();
      }
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
  }

  /** Whether the ledger lists the range among its blocks; false when it cannot be asked (an outage, the killed instance). */
  private async rangeBlocked(): Promise<boolean> {
    const range = PUMPED_RANGE.slice(1);
    try {
      const response = await fetch(`${this.fleet.next().url}/_sms/ledger?since=1`, {
        headers: { 'x-internal-key': this.internalKey },
        signal: AbortSignal.timeout(5_000),
      });
      if (!response.ok) return false;
      const body = (await response.json()) as { data?: { blocks?: Array<{ range: string }> } };
      return (body.data?.blocks ?? []).some((block) => range.startsWith(block.range));
    } catch {
      return false;
    }
  }
}
