import { randomInt } from 'node:crypto';
import { post, reasonOf } from './client';
import type { Fleet } from './fleet';
import type { PowSolver } from './solver';
import type { NonSolverFigures, SolverFigures, Tally } from './tally';
import type { SoakOutbox } from './upstreams';

/*
 * Three bots beside the pumping campaign, each from one client address, each asking a code a
 * second for a fresh British number, none verified, to measure the bot challenge (`adaptive`,
 * docs/security.md "Bot challenge"):
 *   - the flood never solves: its fourth number crosses `client_identifiers` and every request
 *     after is challenged; it must get no SMS after its first challenge;
 *   - the solver solves every challenge, as a bot farm with CPU to spare would, in the soak's
 *     solver process (scripts/soak/solver.ts): what it pays per SMS is the CPU its solutions cost.
 *     Its numbers are spread over a hundred ranges (+44 73…), so that no range's pumping verdict
 *     stops it within the run and the figure is the steady price of a send;
 *   - the /48 bot never solves either, and comes from one IPv6 /48 with a new /64 every three
 *     requests (a /48 holds 65,536), a new number each time over a hundred ranges (+44 77…):
 *     no /64 crosses its signals, its /48 must (`challenge.network_48.identifiers`), and it must
 *     get no SMS after its first challenge.
 */

const FLOOD_RANGE = '+4475311';
const FLOOD_ADDRESS = '192.0.2.1';
const SOLVER_PREFIX = '+4473';
const SOLVER_ADDRESS = '198.51.100.1';
const INTERVAL_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a bot that never solves sends: the number of its n-th request, and the address it comes from. */
interface NonSolverShape {
  /** The prefix every number it asks for starts with: its SMS are counted by it in the fake gateway. */
  prefix: string;
  number(n: number): string;
  address(n: number): string;
}

/** The flood: one address, numbers of one range. */
const FLOOD: NonSolverShape = {
  prefix: FLOOD_RANGE,
  number: () => `${FLOOD_RANGE}${String(randomInt(100_000)).padStart(5, '0')}`,
  address: () => FLOOD_ADDRESS,
};

const SLASH48_PREFIX = '+4477';
const SLASH48 = '2001:db8:48';

/** The /48 bot: a /64 of its own, in a /56 of its own, every three requests; a new number each time. */
function slash48Shape(): NonSolverShape {
  let subnet = 0;
  return {
    prefix: SLASH48_PREFIX,
    number: () => `${SLASH48_PREFIX}${String(randomInt(100_000_000)).padStart(8, '0')}`,
    address: (n) => {
      if (n % 3 === 0) subnet = randomInt(0x10000);
      return `${SLASH48}:${subnet.toString(16)}:${randomInt(0x10000).toString(16)}::${(n + 1).toString(16)}`;
    },
  };
}

/** A bot that never solves: it must get no SMS after its first challenge. */
class NonSolvingBot {
  readonly figures: NonSolverFigures;
  private smsAtFirstChallenge?: number;

  constructor(
    private readonly shape: NonSolverShape,
    private readonly tally: Tally,
    private readonly fleet: Fleet,
    private readonly outbox: SoakOutbox,
    allowedBefore: number,
  ) {
    this.figures = { asked: 0, challenged: 0, smsBefore: 0, smsAfter: 0, allowedBefore };
  }

  async run(until: number): Promise<void> {
    const started = Date.now();
    while (Date.now() < until) {
      const from = this.shape.address(this.figures.asked);
      this.figures.asked += 1;
      const outcome = await post(
        this.tally,
        this.fleet.next().url,
        'otp_generate',
        { uid: this.shape.number(this.figures.asked) },
        from,
      );
      if (outcome.kind === 'answer' && reasonOf(outcome.envelope) === 'challenge_required') {
        this.figures.challenged += 1;
        this.figures.firstChallengeAfterSeconds ??= (Date.now() - started) / 1000;
        this.smsAtFirstChallenge ??= this.outbox.codesTo(this.shape.prefix);
      }
      await sleep(INTERVAL_MS);
    }
  }

  /** Counts its SMS once the run is over, from what the fake gateway received: none may arrive late unseen. */
  settle(): NonSolverFigures {
    const sms = this.outbox.codesTo(this.shape.prefix);
    this.figures.smsBefore = this.smsAtFirstChallenge ?? sms;
    this.figures.smsAfter = sms - this.figures.smsBefore;
    return this.figures;
  }
}

export const floodBot = (tally: Tally, fleet: Fleet, outbox: SoakOutbox, allowedBefore: number) =>
  new NonSolvingBot(FLOOD, tally, fleet, outbox, allowedBefore);
export const slash48Bot = (tally: Tally, fleet: Fleet, outbox: SoakOutbox, allowedBefore: number) =>
  new NonSolvingBot(slash48Shape(), tally, fleet, outbox, allowedBefore);

export class SolvingBot {
  readonly figures: SolverFigures = { asked: 0, challenged: 0, smsFree: 0, smsPaid: 0, solves: 0, cpuMs: 0 };

  constructor(
    private readonly tally: Tally,
    private readonly fleet: Fleet,
    private readonly outbox: SoakOutbox,
    private readonly solver: PowSolver,
  ) {}

  async run(until: number): Promise<void> {
    this.solver.start();
    while (Date.now() < until) {
      const uid = `${SOLVER_PREFIX}${String(randomInt(100_000_000)).padStart(8, '0')}`;
      this.figures.asked += 1;
      const outcome = await post(this.tally, this.fleet.next().url, 'otp_generate', { uid }, SOLVER_ADDRESS);
      const challenge =
        outcome.kind === 'answer' && reasonOf(outcome.envelope) === 'challenge_required'
          ? outcome.envelope.data?.challenge
          : undefined;
      if (challenge) {
        this.figures.challenged += 1;
        const solution = await this.solver.solve(challenge);
        await post(this.tally, this.fleet.next().url, 'otp_generate', { uid, challenge: solution }, SOLVER_ADDRESS);
      }
      // Each number is fresh: what it received is what this request bought (none when refused).
      if (challenge) this.figures.smsPaid += this.outbox.codeCount(uid);
      else this.figures.smsFree += this.outbox.codeCount(uid);
      await sleep(INTERVAL_MS);
    }
  }

  settle(): SolverFigures {
    return Object.assign(this.figures, { solves: this.solver.solves, cpuMs: this.solver.cpuMs });
  }
}
