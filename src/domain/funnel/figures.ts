import type { JourneyDiagram, JourneyScreen } from '../../../machines';
import { SCREEN_SECONDS_BUCKETS } from '../../core/metrics';
import { MINUTE_MS, type FunnelCounts, type FunnelRead, type FunnelRange } from './store';
import { refusalWords, stillThere } from './words';
import { completionIndex, diagramTrail, parseField, stepLabel, TRAIL_SEP } from './counting';

/*
 * The funnel's figures for one journey's diagram, read from the counts of the journeys that
 * started in a range (src/domain/funnel/counting.ts counts them). Every figure is a number of people (of
 * journeys) unless it says requests, and each follows from one count, `reached[trail]`: the
 * journeys whose trail began with that one. A diagram is a trail d0 → d1 → ... → dn; at its
 * position k:
 *   - arrived = reached[d0..dk] = the people on the arrow into it (the first screen, every
 *     journey's, has everyone who began; who went on from it this way started the journey);
 *   - went on = reached[d0..dk+1]; went elsewhere = the journeys whose trail went from d0..dk
 *     to another screen (another diagram's way); what is left was last seen there: in progress
 *     while it may still go on, stopped once idle longer than the screen allows (the journey's
 *     current count, `w|trail|minute`, says where it waits and until when);
 *   - at the end screen (its first position: the email registration's 90 after the form, not
 *     the 90 it comes back to after adding a phone) everyone arrived has completed: no
 *     drop-off there, by definition, and what they did after never reopens the journey.
 * A screen's people are those of its first pass: a later pass is a return, on its arrow (as
 * `returning`), never a second arrival. So arrived = Σ people arriving on the arrows in (minus
 * returns) = went on + elsewhere + stopped + in progress (+ completed at the end) on every screen.
 * The same figures feed GET /flows/stats, /flows (the diagrams and their tables), /flows/funnel
 * and `npm run funnel`.
 */

interface RefusalFigure {
  reason: string;
  /** The mistake in product's words (machines/diagrams/labels.ts). */
  mistake: string;
  /** Requests refused so (each wrong code is one). */
  count: number;
  /** People who met it at least once. */
  people: number;
}

/** Where the people who arrived at a screen went next: one row per screen, and who is still there or stopped. */
interface SplitFigure {
  /** The next screen's state, or null for "still there or stopped". */
  to: string | null;
  title: string;
  people: number;
  /** Whether that is this journey's way on. */
  own: boolean;
}

export interface ScreenFigures {
  state: string;
  step: string | number | null;
  title: string;
  /** People who reached the screen on this journey's way (the first screen: who started). */
  arrived: number;
  /** Went on along this journey's way. */
  continued: number;
  /** Went on to another journey's screen. */
  elsewhere: number;
  /** Last seen here, idle for longer than the screen allows (a code's lifetime; `funnel.idle_seconds` elsewhere). */
  stopped: number;
  /** Last seen here, and may still go on: not idle that long yet. */
  inProgress: number;
  /** Reached the end here (only on the journey's end screen). */
  completed: number;
  /** continued / arrived, 0..1; null when nobody arrived or at the end. */
  conversion: number | null;
  /** stopped / arrived, 0..1; null when nobody arrived, and always at the end (arriving there is completing). */
  dropOff: number | null;
  /** Requests that took an arrow into the screen again (a code asked again, a form sent again): not people. */
  repeats: number;
  /** The people who sent them. */
  repeatedPeople: number;
  /** Where the people who arrived went next, every way the machine has (a shared screen shows how people split). */
  split: SplitFigure[];
  /** People timed on the screen (those whose request carried the screen's proof or code). */
  timed: number;
  /** Seconds: the upper bound of the bucket holding the median (p90); null when nobody was timed or beyond the last bucket. */
  median_seconds: number | null;
  p90_seconds: number | null;
  /** The refusals met on the screen, most frequent first (at most 3). */
  refusals: RefusalFigure[];
  /** Whether this is the journey's end screen. */
  last: boolean;
  /** On a first screen: people turned away at the door (refused before any journey began), not among the arrived. */
  turnedAway: number;
}

interface EdgeFigure {
  from: string;
  to: string;
  /** The user's action in product's words. */
  label: string;
  /** People who took the arrow on this journey's way. */
  people: number;
  /** Of them, people who had been on the screen it leads to before (a return: 62 → 90 after registering). */
  returning: number;
  /** Requests that took it again. */
  repeats: number;
  /** The people who sent them. */
  repeatedPeople: number;
}

export interface JourneyFigures {
  id: string;
  title: string;
  /**
   * People who started this journey: who left its first screen its way. The first screen (the
   * identifier) is every journey's, so its arrivals are everyone's and its split says where they
   * went; a journey's own figures begin with its first arrow.
   */
  started: number;
  /** People who reached its end. */
  completed: number;
  /**
   * People turned away before its first screen (every provider refused the send, a cooldown, a
   * limit, the challenge), heading its way: not among the started, so an outage shows here.
   */
  turnedAway: number;
  /** Why, most frequent first: people and requests (at the door, each attempt is one person). */
  turnedAwayReasons: RefusalFigure[];
  /** completed / started; null when nobody started. */
  completionRate: number | null;
  /** Time from start to the end, seconds (bucket upper bounds). */
  median_complete_seconds: number | null;
  p90_complete_seconds: number | null;
  screens: ScreenFigures[];
  edges: EdgeFigure[];
}

export interface FunnelFigures {
  /** The range, `[from, to)`: journeys that started in it. */
  from: string;
  to: string;
  resolution: FunnelRange['resolution'];
  journeys: JourneyFigures[];
}

interface Tallies {
  reached: Map<string, number>;
  /** Trail -> the trails one screen longer that were reached. */
  children: Map<string, string[]>;
  repeats: Map<string, number>;
  repeatedPeople: Map<string, number>;
  refusals: Map<string, Map<string, { count: number; people: number }>>;
  times: Map<string, number[]>;
  sinceStart: Map<string, number[]>;
  /** Door trail (a first screen, and where they were heading) -> reason -> people turned away. */
  turnedAway: Map<string, Map<string, number>>;
  /** Trail -> the people waiting there whose idle limit had not passed when read. */
  waiting: Map<string, number>;
}

function tally(counts: FunnelCounts, nowMs: number): Tallies {
  const t: Tallies = {
    reached: new Map(),
    children: new Map(),
    repeats: new Map(),
    repeatedPeople: new Map(),
    refusals: new Map(),
    times: new Map(),
    sinceStart: new Map(),
    turnedAway: new Map(),
    waiting: new Map(),
  };
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);
  const histogram = (map: Map<string, number[]>, key: string, bucket: number, n: number) => {
    const buckets = map.get(key) ?? new Array<number>(SCREEN_SECONDS_BUCKETS.length + 1).fill(0);
    if (bucket < buckets.length) buckets[bucket]! += n;
    map.set(key, buckets);
  };
  for (const [field, n] of Object.entries(counts)) {
    const parsed = parseField(field);
    if (!parsed || !(n > 0)) continue;
    if (parsed.kind === 'reached') {
      add(t.reached, parsed.trail, n);
      const cut = parsed.trail.lastIndexOf(TRAIL_SEP);
      if (cut > 0) {
        const parent = parsed.trail.slice(0, cut);
        t.children.set(parent, [...(t.children.get(parent) ?? []), parsed.trail]);
      }
    } else if (parsed.kind === 'repeat') add(t.repeats, parsed.trail, n);
    else if (parsed.kind === 'repeatedPeople') add(t.repeatedPeople, parsed.trail, n);
    else if (parsed.kind === 'waiting') {
      if (parsed.bucket * MINUTE_MS > nowMs) add(t.waiting, parsed.trail, n);
    } else if (parsed.kind === 'turnedAway') {
      const reasons = t.turnedAway.get(parsed.trail) ?? new Map<string, number>();
      add(reasons, parsed.reason, n);
      t.turnedAway.set(parsed.trail, reasons);
    } else if (parsed.kind === 'refusal' || parsed.kind === 'refusedPeople') {
      const reasons = t.refusals.get(parsed.trail) ?? new Map<string, { count: number; people: number }>();
      const figure = reasons.get(parsed.reason) ?? { count: 0, people: 0 };
      if (parsed.kind === 'refusal') figure.count += n;
      else figure.people += n;
      reasons.set(parsed.reason, figure);
      t.refusals.set(parsed.trail, reasons);
    } else if (parsed.kind === 'time' || parsed.kind === 'sinceStart')
      histogram(parsed.kind === 'time' ? t.times : t.sinceStart, parsed.trail, parsed.bucket, n);
  }
  return t;
}

/** The upper bound of the bucket where the q-quantile falls; null when none or beyond the last bound. */
function quantileBound(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < buckets.length; i += 1) {
    seen += buckets[i]!;
    if (seen >= q * total) return SCREEN_SECONDS_BUCKETS[i] ?? null;
  }
  return null;
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);
const sumInto = (into: number[], from: readonly number[] | undefined) =>
  from?.forEach((n, i) => (into[i] = (into[i] ?? 0) + n));

/** What one position of a diagram's trail holds: the journeys on its way there, and where they went. */
function position(t: Tallies, key: string, next: string | undefined) {
  const arrived = t.reached.get(key) ?? 0;
  const ways = (t.children.get(key) ?? []).map((child) => ({ child, people: t.reached.get(child) ?? 0 }));
  const continued = next === undefined ? 0 : (t.reached.get(next) ?? 0);
  const elsewhere = ways.filter((w) => w.child !== next).reduce((sum, w) => sum + w.people, 0);
  const left = Math.max(0, arrived - continued - elsewhere);
  // In progress: who waits here and may still go on (their idle limit has not passed); the rest have stopped.
  const inProgress = Math.min(left, t.waiting.get(key) ?? 0);
  return { arrived, continued, elsewhere, inProgress, stopped: left - inProgress, ways };
}

/** Every screen of every diagram by its step label: where a shared screen's people went may be another journey's screen. */
function screensByLabel(diagrams: readonly JourneyDiagram[]): Map<string, JourneyScreen> {
  const screens = new Map<string, JourneyScreen>();
  for (const screen of diagrams.flatMap((d) => d.screens))
    if (!screens.has(stepLabel(screen.state))) screens.set(stepLabel(screen.state), screen);
  return screens;
}

export { completionIndex };

function journeyFigures(
  diagram: JourneyDiagram,
  t: Tallies,
  everyScreen: ReadonlyMap<string, JourneyScreen> = screensByLabel([diagram]),
): JourneyFigures {
  const trail = diagramTrail(diagram);
  const keys = trail.map((_, i) => trail.slice(0, i + 1).join(TRAIL_SEP));
  const end = trail.length - 1;
  const done = completionIndex(trail);

  const screens = diagram.screens.map((screen): ScreenFigures => {
    const label = stepLabel(screen.state);
    const figures = {
      arrived: 0,
      continued: 0,
      elsewhere: 0,
      stopped: 0,
      inProgress: 0,
      completed: 0,
      repeats: 0,
      repeatedPeople: 0,
    };
    const split = new Map<string | null, SplitFigure>();
    const times: number[] = [];
    const refusals = new Map<string, { count: number; people: number }>();
    // A screen's people are those of its first pass: a later pass (a return) brings no one new.
    const first = trail.indexOf(label);
    trail.forEach((at, k) => {
      if (at !== label) return;
      const key = keys[k]!;
      figures.repeats += k > 0 ? (t.repeats.get(key) ?? 0) : 0;
      figures.repeatedPeople += k > 0 ? (t.repeatedPeople.get(key) ?? 0) : 0;
      for (const [reason, figure] of t.refusals.get(key) ?? []) {
        const into = refusals.get(reason) ?? { count: 0, people: 0 };
        into.count += figure.count;
        into.people += figure.people;
        refusals.set(reason, into);
      }
      if (k !== first) return;
      const p = position(t, key, k < end ? keys[k + 1] : undefined);
      figures.arrived += p.arrived;
      if (k === done) {
        // Arriving at the end is completing, once: whatever they do after is another story.
        figures.completed += p.arrived;
        return;
      }
      figures.continued += p.continued;
      figures.elsewhere += p.elsewhere;
      figures.stopped += p.stopped;
      figures.inProgress += p.inProgress;
      sumInto(times, t.times.get(key));
      for (const way of p.ways) {
        const to = way.child.slice(way.child.lastIndexOf(TRAIL_SEP) + 1);
        const screen = everyScreen.get(to);
        const state = screen?.state ?? to;
        const row = split.get(state) ?? {
          to: state,
          title: screen?.title ?? to,
          people: 0,
          own: way.child === keys[k + 1],
        };
        row.people += way.people;
        split.set(state, row);
      }
      const rest = split.get(null) ?? { to: null, title: stillThere(), people: 0, own: false };
      rest.people += p.stopped + p.inProgress;
      split.set(null, rest);
    });
    const last = trail[end] === label;
    let turnedAway = 0;
    if (first === 0)
      for (const [door, reasons] of t.turnedAway)
        if (door === keys[0] || door.startsWith(keys[0] + TRAIL_SEP)) for (const n of reasons.values()) turnedAway += n;
    return {
      state: screen.state,
      step: screen.step,
      title: screen.title,
      ...figures,
      conversion:
        figures.arrived > figures.completed ? ratio(figures.continued, figures.arrived - figures.completed) : null,
      dropOff: figures.arrived > figures.completed ? ratio(figures.stopped, figures.arrived - figures.completed) : null,
      split: [...split.values()].sort((a, b) => (a.to === null ? 1 : b.to === null ? -1 : b.people - a.people)),
      timed: times.reduce((a, b) => a + b, 0),
      median_seconds: quantileBound(times, 0.5),
      p90_seconds: quantileBound(times, 0.9),
      refusals: [...refusals]
        .sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))
        .slice(0, 3)
        .map(([reason, figure]) => ({ reason, mistake: refusalWords(reason), ...figure })),
      last,
      turnedAway,
    };
  });

  // Each arrow: the people of every position of the trail it leads to (a diagram's arrows are its requests, in order).
  const edges = diagram.actions.map((action) => {
    let people = 0;
    let returning = 0;
    let repeats = 0;
    let repeatedPeople = 0;
    trail.forEach((label, k) => {
      if (k === 0 || label !== stepLabel(action.to) || trail[k - 1] !== stepLabel(action.from)) return;
      const n = t.reached.get(keys[k]!) ?? 0;
      people += n;
      if (trail.indexOf(label) < k) returning += n;
      repeats += t.repeats.get(keys[k]!) ?? 0;
      repeatedPeople += t.repeatedPeople.get(keys[k]!) ?? 0;
    });
    return { from: action.from, to: action.to, label: action.label, people, returning, repeats, repeatedPeople };
  });
  const started = t.reached.get(keys[keys.length > 1 ? 1 : 0] ?? '') ?? 0;
  const completed = end > 0 ? (t.reached.get(keys[done]!) ?? 0) : 0;
  const toEnd = t.sinceStart.get(keys[done] ?? '') ?? [];
  const door = [...(keys.length > 1 ? (t.turnedAway.get(keys[1]!) ?? []) : [])].sort(
    (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]),
  );
  return {
    id: diagram.id,
    title: diagram.title,
    started,
    completed,
    turnedAway: door.reduce((sum, [, n]) => sum + n, 0),
    turnedAwayReasons: door.map(([reason, n]) => ({ reason, mistake: refusalWords(reason), count: n, people: n })),
    completionRate: ratio(completed, started),
    median_complete_seconds: quantileBound(toEnd, 0.5),
    p90_complete_seconds: quantileBound(toEnd, 0.9),
    screens,
    edges,
  };
}

/** Every journey's figures (or one's) for what a range read. */
export function funnelFigures(diagrams: readonly JourneyDiagram[], read: FunnelRead, journey?: string): FunnelFigures {
  const t = tally(read.counts, read.at);
  const everyScreen = screensByLabel(diagrams);
  return {
    from: new Date(read.range.from).toISOString(),
    to: new Date(read.range.to).toISOString(),
    resolution: read.range.resolution,
    journeys: diagrams.filter((d) => !journey || d.id === journey).map((d) => journeyFigures(d, t, everyScreen)),
  };
}

export interface ConversionShift {
  journey: string;
  state: string;
  title: string;
  before: number | null;
  after: number | null;
  /** after - before, in points of conversion (0..1); null when either range saw nobody there. */
  delta: number | null;
}

/** The screens of two ranges side by side, the largest moves of conversion first. */
export function compareFigures(before: FunnelFigures, after: FunnelFigures): ConversionShift[] {
  const shifts: ConversionShift[] = [];
  for (const journey of after.journeys) {
    const earlier = before.journeys.find((j) => j.id === journey.id);
    for (const screen of journey.screens) {
      if (screen.last) continue;
      const was = earlier?.screens.find((s) => s.state === screen.state)?.conversion ?? null;
      const delta = was === null || screen.conversion === null ? null : screen.conversion - was;
      shifts.push({
        journey: journey.id,
        state: screen.state,
        title: screen.title,
        before: was,
        after: screen.conversion,
        delta,
      });
    }
  }
  return shifts.sort((a, b) => Math.abs(b.delta ?? 0) - Math.abs(a.delta ?? 0));
}

/** One range's figures, and optionally a second range's with the screens whose conversion moved. */
export interface FunnelStats extends FunnelFigures {
  compared?: FunnelFigures;
  /** The screens of both ranges, the largest moves of conversion first. */
  shifts?: ConversionShift[];
}
