import { randomInt } from 'node:crypto';
import { post, reasonOf } from './client';
import type { Fleet } from './fleet';
import type { PumpingFigures, Tally } from './tally';

/*
 * An SMS pumping campaign beside the journeys (docs/security.md, "SMS pumping"): a bot asks
 * for codes to random numbers of one premium-looking British range, ten a second over the
 * fleet, and never verifies one. The fleet shares the defence's counters in Redis, so the range
 * must be blocked once it had sms.pumping.block_min_sends SMS, whichever instances the bot reaches,
 * and the journeys (all Italian) must never be refused for it.
 */

export const PUMPED_RANGE = '+4475206';
const INTERVAL_MS = 100;
/** The soak's sms.pumping.block_min_sends: low enough that even the smoke run's short campaign meets the block. */
export const SOAK_BLOCK_MIN_SENDS = 10;

export class Pumping {
  readonly figures: PumpingFigures = { asked: 0, blocked: 0, minSends: SOAK_BLOCK_MIN_SENDS };

  constructor(
    private readonly tally: Tally,
    private readonly fleet: Fleet,
  ) {}

  async run(until: number): Promise<void> {
    const started = Date.now();
    while (Date.now() < until) {
      const number = `${PUMPED_RANGE}${String(randomInt(100_000)).padStart(5, '0')}`;
      this.figures.asked += 1;
      const outcome = await post(this.tally, this.fleet.next().url, 'otp_generate', { uid: number });
      if (outcome.kind === 'answer' && reasonOf(outcome.envelope) === 'sms_destination_blocked') {
        this.figures.blocked += 1;
        this.figures.blockedAfterSeconds ??= (Date.now() - started) / 1000;
      }
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
  }
}
