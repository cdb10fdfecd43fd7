import { refusalLabel, type JourneyDiagram } from '../../machines';
import { SCREEN_SECONDS_BUCKETS } from '../core/metrics';
import type { FunnelCounts, FunnelRange } from '../domain/funnel/store';
import { parseField } from './funnel';

/*
 * The funnel's figures for one journey, read from the machine-wide counts of a time range
 * (src/flows/funnel.ts) along the journey's diagram. Each figure is a count of requests:
 *   - people on an edge: requests that took that transition (a person who asks for a new code
 *     takes the edge into the code screen again);
 *   - arrived at a screen: requests that settled there, from any screen of any journey (the
 *     first screen of a journey shows without a request: its figure is who left it, `started`);
 *   - conversion: the requests that went on along this journey's edge out of the screen, over
 *     those that arrived; went elsewhere: along an edge of another journey;
 *   - drop-off: arrived and never went on along any edge (stopped there);
 *   - time on the screen: median and p90 as the upper bound of the bucket they fall in.
 * The same figures feed GET /flows/stats, the /flows/funnel page and `npm run funnel`.
 */

export interface RefusalFigure {
  reason: string;
  /** The mistake in product's words (machines/labels.ts). */
  mistake: string;
  count: number;
}

export interface ScreenFigures {
  state: string;
  step: string | number | null;
  title: string;
  /** Requests that settled on the screen; for the journey's first screen, those that left it. */
  arrived: number;
  /** Went on along this journey's edges. */
  continued: number;
  /** Went on along another journey's edge. */
  elsewhere: number;
  /** Arrived and went on nowhere (never below 0: a range can cut a journey in two). */
  stopped: number;
  /** continued / arrived, 0..1; null when nobody arrived. */
  conversion: number | null;
  /** stopped / arrived, 0..1; null when nobody arrived. */
  dropOff: number | null;
  /** Requests that carried the screen's proof, so their time on it is known. */
  timed: number;
  /** Seconds: the upper bound of the bucket holding the median (p90); null when nobody was timed or beyond the last bucket. */
  medianSeconds: number | null;
  p90Seconds: number | null;
  /** The refusals met on the screen, most frequent first (at most 3). */
  refusals: RefusalFigure[];
  /** Whether this is where the journey ends (nothing leads on in its diagram). */
  last: boolean;
}

export interface EdgeFigure {
  from: string;
  to: string;
  /** The user's action in product's words. */
  label: string;
  people: number;
}

export interface JourneyFigures {
  id: string;
  title: string;
  screens: ScreenFigures[];
  edges: EdgeFigure[];
}

export interface FunnelFigures {
  from: string;
  to: string;
  resolution: FunnelRange['resolution'];
  journeys: JourneyFigures[];
}

interface Tallies {
  edges: Map<string, number>;
  into: Map<string, number>;
  out: Map<string, number>;
  refusals: Map<string, Map<string, number>>;
  times: Map<string, number[]>;
}

function tally(counts: FunnelCounts): Tallies {
  const t: Tallies = { edges: new Map(), into: new Map(), out: new Map(), refusals: new Map(), times: new Map() };
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);
  for (const [field, n] of Object.entries(counts)) {
    const parsed = parseField(field);
    if (!parsed || !(n > 0)) continue;
    if (parsed.kind === 'edge') {
      add(t.edges, `${parsed.from}>${parsed.to}`, n);
      add(t.into, parsed.to, n);
      add(t.out, parsed.from, n);
    } else if (parsed.kind === 'refusal') {
      const reasons = t.refusals.get(parsed.from) ?? new Map<string, number>();
      add(reasons, parsed.reason, n);
      t.refusals.set(parsed.from, reasons);
    } else {
      const buckets = t.times.get(parsed.from) ?? new Array<number>(SCREEN_SECONDS_BUCKETS.length + 1).fill(0);
      if (parsed.bucket < buckets.length) buckets[parsed.bucket]! += n;
      t.times.set(parsed.from, buckets);
    }
  }
  return t;
}

/** The upper bound of the bucket where the q-quantile falls; null when none or beyond the last bound. */
export function quantileBound(buckets: readonly number[], q: number): number | null {
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

export function journeyFigures(diagram: JourneyDiagram, t: Tallies): JourneyFigures {
  const edges = diagram.actions.map((a) => ({ from: a.from, to: a.to, label: a.label, people: t.edges.get(`${a.from}>${a.to}`) ?? 0 }));
  const first = diagram.screens[0]?.state;
  const screens = diagram.screens.map((screen): ScreenFigures => {
    const out = edges.filter((e) => e.from === screen.state);
    const continued = out.reduce((sum, e) => sum + e.people, 0);
    const left = t.out.get(screen.state) ?? 0;
    const arrived = screen.state === first ? left : (t.into.get(screen.state) ?? 0);
    const stopped = Math.max(0, arrived - left);
    const buckets = t.times.get(screen.state) ?? [];
    const reasons = [...(t.refusals.get(screen.state) ?? new Map<string, number>())]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, 3)
      .map(([reason, count]) => ({ reason, mistake: refusalLabel(reason) ?? reason, count }));
    return {
      state: screen.state,
      step: screen.step,
      title: screen.title,
      arrived,
      continued,
      elsewhere: Math.max(0, left - continued),
      stopped,
      conversion: ratio(continued, arrived),
      dropOff: ratio(stopped, arrived),
      timed: buckets.reduce((a, b) => a + b, 0),
      medianSeconds: quantileBound(buckets, 0.5),
      p90Seconds: quantileBound(buckets, 0.9),
      refusals: reasons,
      last: out.length === 0,
    };
  });
  return { id: diagram.id, title: diagram.title, screens, edges };
}

/** Every journey's figures (or one's) for the counts of a range. */
export function funnelFigures(diagrams: readonly JourneyDiagram[], counts: FunnelCounts, range: FunnelRange, journey?: string): FunnelFigures {
  const t = tally(counts);
  return {
    from: new Date(range.from).toISOString(),
    to: new Date(range.to).toISOString(),
    resolution: range.resolution,
    journeys: diagrams.filter((d) => !journey || d.id === journey).map((d) => journeyFigures(d, t)),
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
      shifts.push({ journey: journey.id, state: screen.state, title: screen.title, before: was, after: screen.conversion, delta });
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
