import { randomInt } from 'node:crypto';
import { post, reasonOf } from './client';
import type { Fleet } from './fleet';
import type { PumpingFigures, Tally } from './tally';

/*
 * An SMS pumping campaign beside the journeys (docs/security.md, "SMS pumping"): a bot asks
 * for codes to random numbers of one premium-looking British range, one a second over the
 * fleet, and never verifies one. The fleet shares the defence's figures in Redis, so the range
 * must be blocked, whichever instances the bot reaches, once its sms.pumping.block_min_sends SMS
 * were judged (a grace after they were sent) and a grace on watch has passed; the journeys (all
 * Italian) must never be refused for it. At one a second it costs about
 * SOAK_BLOCK_MIN_SENDS + the grace in seconds, SMS: at ten, the graces alone would cost 70, over
 * the ceiling the campaign of the simulation keeps (test/security/sms-pumping.test.ts).
 */

export const PUMPED_RANGE = '+4475206';
const INTERVAL_MS = 1000;
/** The soak's sms.pumping.block_min_sends and judge_after_seconds: low enough that even the smoke run's short campaign may meet the block. */
export const SOAK_BLOCK_MIN_SENDS = 5;
/**
 * The instances judge codes this old (production: 60). Journeys type their code within a second,
 * but none can be verified while Redis is down, nor until their instance has reconnected (its
 * back-off reaches 2 s): a grace shorter than that judges honest codes nobody could verify and
 * puts the journeys' range on watch. It failed one smoke run in a few at 2 s with a 1.5 s outage.
 */
export const soakJudgeAfterSeconds = (outageSeconds: number): number => Math.ceil(outageSeconds) + 4;
/** The block is due two graces and a second after the last SMS of the minimum; this much more for a busy machine. */
const BLOCK_MARGIN_SECONDS = 5;

export class Pumping {
  readonly figures: PumpingFigures = { asked: 0, blocked: 0, minSends: SOAK_BLOCK_MIN_SENDS };
  private spent = 0;

  constructor(
    private readonly tally: Tally,
    private readonly fleet: Fleet,
    private readonly judgeAfterSeconds: number,
  ) {}

  async run(until: number): Promise<void> {
    const started = Date.now();
    while (Date.now() < until) {
      const number = `${PUMPED_RANGE}${String(randomInt(100_000)).padStart(5, '0')}`;
      this.figures.asked += 1;
      const outcome = await post(this.tally, this.fleet.next().url, 'otp_generate', { uid: number });
      const elapsed = (Date.now() - started) / 1000;
      this.figures.ranSeconds = elapsed;
      if (outcome.kind === 'answer' && outcome.envelope.success === true && ++this.spent === SOAK_BLOCK_MIN_SENDS) {
        this.figures.blockDueAfterSeconds = elapsed + 2 * this.judgeAfterSeconds + 1 + BLOCK_MARGIN_SECONDS;
      }
      if (outcome.kind === 'answer' && reasonOf(outcome.envelope) === 'sms_destination_blocked') {
        this.figures.blocked += 1;
        this.figures.blockedAfterSeconds ??= (Date.now() - started) / 1000;
      }
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
  }
}
