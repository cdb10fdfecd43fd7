import type { JourneyDiagram } from '../../machines';
import { newJourneyId } from '../../src/domain/funnel/journey-id';
import type { FunnelEntry } from '../../src/domain/funnel/store';
import {
  entryOf,
  funnelDiagrams,
  knownTrails,
  nextTrail,
  stepLabel,
  type FunnelEvent,
} from '../../src/domain/funnel/counting';

/*
 * Journeys as the funnel sees them, generated from the journey diagrams (each a replay of the
 * login machine along one of machines/diagrams/journeys.ts's paths): a journey follows one diagram's
 * requests up to where it stops, asks for a code again or types a wrong one on the way, and
 * carries its id and trail from one request to the next as the proofs and code records do.
 */

export interface JourneyPlan {
  diagram: number;
  /** How many of the diagram's requests it makes (0: none answered, e.g. a bad number). */
  requests: number;
  startMs: number;
  /** Per request: how many times it is repeated (a code asked again, a form sent again). */
  repeats: number[];
  /** Per request: wrong codes typed on the screen it leads to (counted once it is there). */
  wrong: number[];
  /** Seconds between requests. */
  gapSeconds: number;
  /**
   * Requests made after reaching the end at 90 (a whole journey only): the email registration's
   * own after it (add a phone 90 → 62 → 90, save the profile 90 → 90), in turn, coming back to
   * screens already passed, the end screen included.
   */
  after?: number;
}

/** What a person may do once at 90: the email registration's requests from its first 90 on. */
const afterEnd = (diagrams: readonly JourneyDiagram[]) => {
  const replayed = diagrams.find((d) => d.id === 'email-registration')!.replayed;
  return replayed.slice(replayed.findIndex((r) => r.from === 'loggedIn'));
};

/** The trail of each diagram position the plan reached, and its events. */
export function eventsOf(
  diagrams: readonly JourneyDiagram[],
  plan: JourneyPlan,
): { trail: string[]; events: FunnelEvent[] } {
  const diagram = diagrams[plan.diagram]!;
  const id = newJourneyId(plan.startMs);
  const events: FunnelEvent[] = [];
  let at = plan.startMs;
  let trail: string[] = [];
  if (plan.requests === 0) {
    // Refused at the door, before any journey began: a person turned away on the way to the diagram's second screen.
    const first = diagram.replayed[0]!;
    const toward = stepLabel(first.states[first.states.length - 1]!);
    events.push({ at, from: first.from, outcome: 'delivery_failed', journey: { id, trail: [], fresh: true }, toward });
    return { trail: [], events };
  }
  const whole =
    plan.requests >= diagram.replayed.length &&
    stepLabel(
      diagram.replayed[diagram.replayed.length - 1]!.states[
        diagram.replayed[diagram.replayed.length - 1]!.states.length - 1
      ]!,
    ) === '90';
  const tail = afterEnd(diagrams);
  const after = whole ? Array.from({ length: plan.after ?? 0 }, (_, i) => tail[i % tail.length]!) : [];
  [...diagram.replayed.slice(0, plan.requests), ...after].forEach((request, i) => {
    const to = request.states[request.states.length - 1]!;
    const before = trail.length > 0 ? trail : [stepLabel(request.from)];
    for (let r = 0; r <= (plan.repeats[i] ?? 0); r += 1) {
      events.push({
        at,
        from: request.from,
        to,
        outcome: 'ok',
        journey: { id, trail: before, fresh: i === 0 && r === 0 },
        seconds: plan.gapSeconds,
      });
      at += 1000;
    }
    trail = nextTrail(before, stepLabel(to));
    for (let w = 0; w < (plan.wrong[i] ?? 0); w += 1)
      events.push({ at, from: to, outcome: 'invalid', journey: { id, trail, fresh: false } });
    at += plan.gapSeconds * 1000;
  });
  return { trail, events };
}

/** The store entries of journeys along the named diagrams (defaults: the whole journey, now, no repeat or wrong code, 3 s per screen). */
export async function entriesOf(plans: Array<Partial<JourneyPlan> & { journey: string }>): Promise<FunnelEntry[]> {
  const diagrams = await funnelDiagrams();
  const known = knownTrails(diagrams);
  return plans.flatMap(({ journey, ...plan }) => {
    const diagram = diagrams.findIndex((d) => d.id === journey);
    const { events } = eventsOf(diagrams, {
      diagram,
      requests: diagrams[diagram]!.replayed.length,
      startMs: Date.now(),
      repeats: [],
      wrong: [],
      gapSeconds: 3,
      ...plan,
    });
    return events.flatMap((event) => entryOf({ ...event, from: event.from! }, known) ?? []);
  });
}
