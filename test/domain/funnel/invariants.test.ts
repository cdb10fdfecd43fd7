import fc from 'fast-check';
import type { JourneyDiagram } from '../../../machines';
import { newJourneyId } from '../../../src/domain/funnel/journey-id';
import { createMemoryFunnelStore } from '../../../src/domain/funnel/memory-store';
import { alignRange, MINUTE_MS } from '../../../src/domain/funnel/store';
import {
  codeScreens,
  DEFAULT_IDLE,
  diagramTrail,
  entryOf,
  funnelDiagrams,
  knownTrails,
  stepLabel,
  TRAIL_SEP,
} from '../../../src/domain/funnel/counting';
import { completionIndex, funnelFigures, type FunnelFigures } from '../../../src/domain/funnel/figures';
import { eventsOf, type JourneyPlan } from '../../support/funnel-journeys';

/*
 * The funnel's figures cannot contradict one another: thousands of random mixes of journeys
 * (generated along the diagrams' paths, each stopping anywhere, with resends, wrong codes and
 * starts on either side of a range's edges), their requests counted in any order, and on every
 * diagram, for every screen: arrived = Σ people on its arrows in (the first screen is every journey's: who went on from it its way started it) = went on
 * + elsewhere + stopped + in progress (+ completed at the end); the end shows no drop-off; each
 * diagram position counts exactly the journeys whose path began so and which started in the
 * range; and two adjacent ranges add up to the range they make.
 */

let diagrams: JourneyDiagram[];
let known: Map<string, string[]>;
beforeAll(async () => {
  diagrams = await funnelDiagrams();
  known = knownTrails(diagrams);
});

const BASE = Date.UTC(2026, 0, 5, 10, 0, 0);
const CODES = codeScreens();

const plan = (count: number) =>
  fc.record({
    diagram: fc.nat({ max: count - 1 }),
    requests: fc.nat({ max: 7 }),
    startMs: fc.integer({ min: BASE - 30 * MINUTE_MS, max: BASE + 90 * MINUTE_MS }),
    repeats: fc.array(fc.nat({ max: 2 }), { maxLength: 7 }),
    wrong: fc.array(fc.nat({ max: 2 }), { maxLength: 7 }),
    gapSeconds: fc.integer({ min: 0, max: 200 }),
    after: fc.nat({ max: 6 }),
  });

/** What differs from what it should be, in words (one expect per run: thousands of expects would be most of the test's time). */
type Problems = string[];
const check = (problems: Problems, what: string, actual: unknown, expected: unknown) => {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    problems.push(`${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
};

/** `people`: the journeys of the range that reached any screen (no screen can have more). */
function invariants(figures: FunnelFigures, people: number, problems: Problems): void {
  for (const journey of figures.journeys) {
    if (journey.completed > journey.started)
      problems.push(`${journey.id}: ${journey.completed} completed of ${journey.started} started`);
    journey.screens.forEach((screen, i) => {
      const edgesIn = journey.edges.filter((e) => e.to === screen.state);
      // A return (62 → 90 after registering) is people on its arrow, never a second arrival.
      const into = edgesIn.reduce((sum, e) => sum + e.people - e.returning, 0);
      const where = `${journey.id} ${screen.state}`;
      if (screen.arrived > people) problems.push(`${where}: ${screen.arrived} arrived of ${people} people`);
      // The first screen is every journey's: its arrivals are everyone's, and those who went on its way started this journey.
      if (i === 0) check(problems, `${where} went on = started`, screen.continued, journey.started);
      else check(problems, `${where} arrived = arrows in`, screen.arrived, into);
      check(
        problems,
        `${where} arrived = went on + elsewhere + stopped + in progress + completed`,
        screen.continued + screen.elsewhere + screen.stopped + screen.inProgress + screen.completed,
        screen.arrived,
      );
      check(
        problems,
        `${where} split`,
        screen.split.reduce((sum, way) => sum + way.people, 0),
        screen.arrived - screen.completed,
      );
      if (screen.last)
        check(
          problems,
          `${where} the end: everyone arrived completed, no drop-off`,
          [screen.completed, screen.dropOff, screen.inProgress, screen.stopped],
          [screen.arrived, null, 0, 0],
        );
      if (!screen.last) check(problems, `${where} completed only at the end`, screen.completed, 0);
      // The first screen's refusals include the people turned away at its door, who never arrived.
      const passes = i === 0 ? screen.arrived + screen.turnedAway : edgesIn.reduce((sum, e) => sum + e.people, 0);
      if (i > 0) check(problems, `${where} nobody turned away past the first screen`, screen.turnedAway, 0);
      for (const refusal of screen.refusals)
        if (refusal.people > Math.min(refusal.count, passes))
          problems.push(`${where} ${refusal.reason}: more people than requests or arrivals`);
    });
  }
}

describe('the funnel figures over generated journeys', () => {
  it('hold their invariants and count each journey once, in the range where it started', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(plan(diagrams.length), { maxLength: 40 }),
        fc.integer({ min: 0, max: 179 }),
        fc.nat(),
        async (plans: JourneyPlan[], split, seed) => {
          const store = createMemoryFunnelStore();
          const generated = plans.map((p) => eventsOf(diagrams, p));
          const keys = generated.map((g) => g.trail.join(TRAIL_SEP));
          // Requests are written out of order (instances flush up to 5 s apart, whichever served them): the counts do not care.
          const events = generated.flatMap((g) => g.events);
          const shuffled = events
            .map((event, i) => ({ event, writeAt: event.at + ((i * 7919 + seed) % 5000) }))
            .sort((a, b) => a.writeAt - b.writeAt);
          // Every request lies within its journey's window (at most 13 x 205 s after it started), and before now.
          const now = BASE + 120 * MINUTE_MS;
          const entries = shuffled.flatMap(({ event, writeAt }) => {
            const entry = entryOf({ ...event, from: event.from! }, known);
            return entry ? [{ entry, writeAt }] : [];
          });
          expect(entries.length).toBe(events.length);
          for (const { entry, writeAt } of entries) await store.add([entry], writeAt);

          const edge = BASE - 60 * MINUTE_MS + split * MINUTE_MS;
          const ranges = [
            alignRange(BASE - 60 * MINUTE_MS, BASE + 120 * MINUTE_MS, now, 'minute'),
            alignRange(BASE - 60 * MINUTE_MS, edge, now, 'minute'),
            alignRange(edge, BASE + 120 * MINUTE_MS, now, 'minute'),
          ];
          const figures = await Promise.all(
            ranges.map(async (range) => funnelFigures(diagrams, await store.read(range, now))),
          );
          const problems: Problems = [];
          figures.forEach((f, r) =>
            invariants(
              f,
              keys.filter(
                (trail, j) => trail !== '' && plans[j]!.startMs >= ranges[r]!.from && plans[j]!.startMs < ranges[r]!.to,
              ).length,
              problems,
            ),
          );

          // Exact: each position of a diagram counts the journeys whose trail began so and which started in the range, once.
          figures.forEach((range, r) => {
            const { from, to } = ranges[r]!;
            const inRange = (j: number) => plans[j]!.startMs >= from && plans[j]!.startMs < to;
            // Still waiting: the last request that gave the screen time (not a wrong code on a code screen) plus what the screen allows is after now.
            const isOpen = (j: number) => {
              const { events, trail } = generated[j]!;
              const active = events.filter((e) => e.outcome === 'ok' || !CODES.has(stepLabel(e.from!)));
              const last = active[active.length - 1];
              if (!last || trail.length === 0) return false;
              const allows = CODES.has(trail[trail.length - 1]!) ? DEFAULT_IDLE.codeMs : DEFAULT_IDLE.otherMs;
              return Math.ceil((last.at + allows) / MINUTE_MS) * MINUTE_MS > now;
            };
            /** The journeys in the range (and open or closed) whose trail begins with `prefix` (and is longer, with `longer`). */
            const people = (prefix: string[], open?: boolean, longer = false) => {
              const key = prefix.join(TRAIL_SEP);
              return keys.filter(
                (trail, j) =>
                  inRange(j) &&
                  (open === undefined || open === isOpen(j)) &&
                  (trail === key ? !longer : trail.startsWith(key + TRAIL_SEP)),
              ).length;
            };
            for (const journey of range.journeys) {
              const trail = diagramTrail(diagrams.find((d) => d.id === journey.id)!);
              const at = (k: number) => trail.slice(0, k + 1);
              const done = completionIndex(trail);
              // Turned away at the door: the range's journeys refused before their first screen, heading this journey's way.
              const door = (j: number, second: boolean) => {
                const their = diagramTrail(diagrams[plans[j]!.diagram]!);
                return inRange(j) && keys[j] === '' && their[0] === trail[0] && (!second || their[1] === trail[1]);
              };
              check(
                problems,
                `${journey.id} range ${r} turned away`,
                [journey.turnedAway, journey.screens[0]!.turnedAway],
                [plans.filter((_, j) => door(j, true)).length, plans.filter((_, j) => door(j, false)).length],
              );
              check(
                problems,
                `${journey.id} range ${r} started, completed`,
                [journey.started, journey.completed],
                [people(at(Math.min(1, trail.length - 1))), people(at(done))],
              );
              const action = diagrams.find((d) => d.id === journey.id)!.actions;
              journey.edges.forEach((e, i) => {
                let expected = 0;
                trail.forEach((label, k) => {
                  if (k > 0 && label === stepLabel(action[i]!.to) && trail[k - 1] === stepLabel(action[i]!.from))
                    expected += people(at(k));
                });
                check(problems, `${journey.id} range ${r} ${e.from}>${e.to}`, e.people, expected);
              });
              // Stopped and in progress: those last seen at a position, by whether they may still go on (idle less than the screen allows).
              const lastSeen = (prefix: string[], open: boolean) => people(prefix, open) - people(prefix, open, true);
              for (const screen of journey.screens) {
                let stopped = 0;
                let inProgress = 0;
                trail.forEach((label, k) => {
                  // A screen's first pass only: who comes back is on the arrow back, and the end is complete.
                  if (label !== stepLabel(screen.state) || k !== trail.indexOf(label) || k === done) return;
                  stopped += lastSeen(at(k), false);
                  inProgress += lastSeen(at(k), true);
                });
                check(
                  problems,
                  `${journey.id} range ${r} ${screen.state} stopped, in progress`,
                  [screen.stopped, screen.inProgress],
                  [stopped, inProgress],
                );
              }
            }
          });
          // Two adjacent ranges add up to the range they make: no journey in both, none in neither.
          figures[0]!.journeys.forEach((journey, j) => {
            const [a, b] = [figures[1]!.journeys[j]!, figures[2]!.journeys[j]!];
            check(
              problems,
              `${journey.id} started, completed of the two halves`,
              [journey.started, journey.completed],
              [a.started + b.started, a.completed + b.completed],
            );
            journey.screens.forEach((screen, k) =>
              check(
                problems,
                `${journey.id} ${screen.state} arrived of the two halves`,
                screen.arrived,
                a.screens[k]!.arrived + b.screens[k]!.arrived,
              ),
            );
          });
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: Number(process.env.FUNNEL_RUNS ?? 3000) },
    );
  }, 300_000);
});

describe('a journey first seen in its middle', () => {
  it('is not counted: a request with no journey past the first screen (a trusted caller, a code from before the ids) brings no person', () => {
    const at = BASE;
    const fresh = { id: newJourneyId(at), trail: [], fresh: true };
    const middle = entryOf({ at, journey: fresh, from: 'awaitingPhoneCode', to: 'loggedIn', outcome: 'ok' }, known);
    expect(middle).toEqual({ at, once: [], always: [] });
    const start = entryOf(
      {
        at,
        journey: { ...fresh, id: newJourneyId(at) },
        from: 'enteringIdentifier',
        to: 'awaitingPhoneCode',
        outcome: 'ok',
      },
      known,
    );
    expect(start?.once.map((o) => o.field)).toEqual(['p|enteringIdentifier', 'p|enteringIdentifier.14']);
  });
});
