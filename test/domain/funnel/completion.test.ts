import { JOURNEY_IDS, type JourneyDiagram } from '../../../machines';
import type { Deps } from '../../../src/domain/deps';
import { createMemoryFunnelStore } from '../../../src/domain/funnel/memory-store';
import { alignRange, HOUR_MS, MINUTE_MS } from '../../../src/domain/funnel/store';
import { createFunnelRecorder, entryOf, funnelDiagrams, knownTrails } from '../../../src/domain/funnel/counting';
import { funnelFigures } from '../../../src/domain/funnel/figures';
import { eventually } from '../../support/eventually';
import { eventsOf } from '../../support/funnel-journeys';
import { testConfig, testDeps } from '../../support/app';

/*
 * A journey completes once per person, the first time they reach its end screen: three people
 * register by email (37 → 90), two of them then add a phone (90 → 62 → 90). The email
 * registration reads 3 arrived and 3 completed at 90, no one in progress, no drop-off, and
 * Prometheus counts 3 people at 90, not one more for each who came back.
 */

let diagrams: JourneyDiagram[];
beforeAll(async () => {
  diagrams = await funnelDiagrams();
});

const START = Date.UTC(2026, 0, 5, 10, 0, 0);
const registration = () => diagrams.findIndex((d) => d.id === 'email-registration');
/** Three registrations: one stops at 90, two add a phone and come back to it (the diagram's first five requests). */
const plans = () =>
  [3, 5, 5].map((requests, i) => ({
    diagram: registration(),
    requests,
    startMs: START + i * 1000,
    repeats: [],
    wrong: [],
    gapSeconds: 20,
  }));

describe('an end screen reached twice', () => {
  it('completes each person once: 3 arrived, 3 completed at 90, no drop-off, nobody still in progress', async () => {
    const known = knownTrails(diagrams);
    const store = createMemoryFunnelStore();
    const events = plans().flatMap((p) => eventsOf(diagrams, p).events);
    await store.add(
      events.flatMap((e) => entryOf({ ...e, from: e.from! }, known) ?? []),
      START + 5 * MINUTE_MS,
    );
    // Read while the journeys are young, and again once the hour has passed: 90 reads the same.
    for (const now of [START + 5 * MINUTE_MS, START + 2 * HOUR_MS]) {
      const range = alignRange(START - HOUR_MS, START + HOUR_MS, now, 'minute');
      const journey = funnelFigures(diagrams, await store.read(range, now), 'email-registration').journeys[0]!;
      const at90 = journey.screens.find((s) => s.state === 'loggedIn')!;
      expect([journey.started, journey.completed, journey.completionRate]).toEqual([3, 3, 1]);
      expect({
        arrived: at90.arrived,
        completed: at90.completed,
        inProgress: at90.inProgress,
        stopped: at90.stopped,
        dropOff: at90.dropOff,
      }).toEqual({
        arrived: 3,
        completed: 3,
        inProgress: 0,
        stopped: 0,
        dropOff: null,
      });
      // What they did after is on its own arrows: two went 90 → 62, two came back 62 → 90 (returns, no new arrival).
      const edge = (from: string, to: string) => journey.edges.find((e) => e.from === from && e.to === to)!;
      expect([
        edge('loggedIn', 'awaitingNewPhoneCode').people,
        edge('awaitingNewPhoneCode', 'loggedIn').people,
        edge('awaitingNewPhoneCode', 'loggedIn').returning,
      ]).toEqual([2, 2, 2]);
      expect(journey.screens.find((s) => s.state === 'awaitingNewPhoneCode')!.arrived).toBe(2);
    }
  });

  it('counts 3 people at 90 in Prometheus, however many times each came, and 3 completions of 3 starts', async () => {
    let now = START;
    const deps: Deps = testDeps(testConfig({ funnel: { flush_ms: 0 } }), { now: () => now });
    try {
      const record = createFunnelRecorder(deps)!;
      const journeys = async () => {
        const metric = await deps.metrics.registry.getSingleMetric('lfa_funnel_journeys_total')!.get();
        return Object.fromEntries(metric.values.map((v) => [`${v.labels.journey} ${v.labels.stage}`, v.value]));
      };
      // Every journey and stage from 0, before anyone came: the first completions move the ratio.
      const before = await journeys();
      expect(Object.keys(before).sort()).toEqual(
        JOURNEY_IDS.flatMap((id) => [`${id} completed`, `${id} started`]).sort(),
      );
      expect(Object.values(before).every((n) => n === 0)).toBe(true);
      for (const event of plans()
        .flatMap((p) => eventsOf(diagrams, p).events)
        .sort((a, b) => a.at - b.at)) {
        now = event.at;
        record(event);
      }
      const reached = async () => {
        await deps.funnel.flush();
        const metric = await deps.metrics.registry.getSingleMetric('lfa_funnel_steps_reached_total')!.get();
        return Object.fromEntries(
          metric.values.filter((v) => v.labels.journey === 'email-registration').map((v) => [v.labels.step, v.value]),
        );
      };
      await eventually(async () => expect(await reached()).toMatchObject({ 33: 3, 37: 3, 90: 3, 62: 2 }));
      // Completion in people: 3 started, 3 completed (not 5), the email login that shares 33 started too, completed by none.
      expect(await journeys()).toMatchObject({
        'email-registration started': 3,
        'email-registration completed': 3,
        'email-login-with-phone started': 3,
        'email-login-with-phone completed': 0,
      });
    } finally {
      await deps.close();
    }
  });
});

describe('a person who leaves a screen', () => {
  it('is in progress while they may still go on, and stopped once idle longer than the screen allows, whatever the range', async () => {
    const known = knownTrails(diagrams);
    const store = createMemoryFunnelStore();
    const index = (id: string) => diagrams.findIndex((d) => d.id === id);
    // One left on the code screen 14, one on the registration form 25 (phone registration's fourth request leads there).
    const plans = [
      { diagram: index('phone-login'), requests: 1, startMs: START, repeats: [], wrong: [], gapSeconds: 1 },
      { diagram: index('phone-registration'), requests: 4, startMs: START, repeats: [], wrong: [], gapSeconds: 1 },
    ];
    const events = plans.flatMap((p) => eventsOf(diagrams, p).events);
    const last = Math.max(...events.map((e) => e.at));
    await store.add(
      events.flatMap((e) => entryOf({ ...e, from: e.from! }, known, { codeMs: 300_000, otherMs: 600_000 }) ?? []),
      last,
    );
    const figures = async (now: number) => {
      const range = alignRange(START - HOUR_MS, START + HOUR_MS, now, 'minute');
      const journey = funnelFigures(diagrams, await store.read(range, now), 'phone-registration').journeys[0]!;
      const at = (state: string) => journey.screens.find((s) => s.state === state)!;
      return [at('awaitingPhoneCode'), at('fillingPhoneRegistrationForm')].map((s) => [s.inProgress, s.stopped]);
    };
    // Both may still go on; the range has not ended, and no hour has passed, when the code has expired: stopped at 14 only.
    expect(await figures(last + 2 * MINUTE_MS)).toEqual([
      [1, 0],
      [1, 0],
    ]);
    expect(await figures(last + 6 * MINUTE_MS)).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(await figures(last + 11 * MINUTE_MS)).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });
});
