import type { AnyStateMachine, StateNode } from 'xstate';
import {
  JOURNEY_IDS,
  journeyDiagrams,
  loginFlowMachine,
  resumePointFor,
  SETTLED,
  stateNodes,
  stepOfTag,
  type FlowClaims,
  type JourneyDiagram,
  type LoginFlowInput,
  type StepId,
} from '../../../machines';
import { SCREEN_SECONDS_BUCKETS, type FunnelStage } from '../../core/metrics';
import { isJourneyId, journeyStart, newJourneyId } from './journey-id';
import { CONVERSION_WINDOW_MS, MINUTE_MS, type FunnelEntry, type OnceCount } from './store';
import type { Deps } from '../deps';

/*
 * The journey funnel, counted in people (docs/funnel.md). A journey gets an anonymous id when
 * its first request is answered (src/domain/funnel/journey-id.ts) and carries it, with its
 * trail (the screens it went through, by step), in every proof it is handed, and in the code
 * record where a screen hands out no proof (14, 33): a resend keeps the first code's journey.
 * Each request of the journey is one entry on the store: the trail it reached, counted once per
 * journey (every prefix of it, so the counts nest), or its repeat (a resend, a second update);
 * the refusal it met, as a request and once as a person; its time on the screen it left and
 * since it started. A journey's figures are then read along each diagram's trail
 * (src/domain/funnel/figures.ts): whoever's trail begins with a diagram's is on that diagram
 * up to where it parts from it.
 *
 * Nothing about the person is kept: a field names screens, a reason or a duration bucket. The
 * request only queues a small record; counting it (Prometheus, the store's batch) runs after the
 * answer has gone (setImmediate), and writing the batch runs on its own clock (tally.ts).
 */

/** A journey as one request knows it: its id, and the screens it went through up to the one this request acts on. */
export interface FunnelJourney {
  id: string;
  /** Step labels (`enteringIdentifier`, `14`, ...), the last the screen the request resumed at; empty until known. */
  trail: string[];
  /** Made by this request: no proof or code record named a journey. Counted only if the request is answered. */
  fresh: boolean;
}

/** One request as the funnel sees it. */
export interface FunnelEvent {
  /** When it was answered (ms). */
  at: number;
  journey?: FunnelJourney;
  /** The state resumed at; undefined when the request failed before the machine saw it. */
  from?: string;
  /** The machine's input, to find `from` later when the request failed before its transition. */
  input?: LoginFlowInput;
  /** The screen settled on, when accepted. */
  to?: string;
  /** `ok`, or the refusal's reason. */
  outcome: string;
  /** Time on the `from` screen, seconds, when the request carried the proof that screen handed out. */
  seconds?: number;
  /** On a first screen: the step label of the code screen the request was heading for (14, 33, 23). */
  toward?: string;
}

const SEP = '|';
/** A trail in a field or a proof: its step labels joined. */
export const TRAIL_SEP = '.';
/** The longest trail counted: beyond it a journey is counted where it was (no machine path is this long). */
const MAX_TRAIL = 16;
const LABEL = /^[A-Za-z0-9]{1,40}$/;

/** Fields of the store, each about a trail (its step labels joined). */
const reachedField = (trail: string) => `p${SEP}${trail}`;
const repeatField = (trail: string) => `s${SEP}${trail}`;
/** A journey that repeated a step into the trail: once per journey (the people behind the repeats). */
const repeatedPeopleField = (trail: string) => `S${SEP}${trail}`;
const refusalField = (trail: string, reason: string) => `r${SEP}${trail}${SEP}${reason}`;
const refusedPeopleField = (trail: string, reason: string) => `R${SEP}${trail}${SEP}${reason}`;
const timeField = (trail: string, bucket: number) => `t${SEP}${trail}${SEP}${bucket}`;
const sinceStartField = (trail: string, bucket: number) => `c${SEP}${trail}${SEP}${bucket}`;
/** A journey waiting on `trail` until the minute `minute` (ms / MINUTE_MS): its current count, moved as it goes on. */
const waitingField = (trail: string, minute: number) => `w${SEP}${trail}${SEP}${minute}`;
/** A person turned away at the door: refused on a first screen before any journey began, `trail` that screen and where they were heading. */
const turnedAwayField = (trail: string, reason: string) => `x${SEP}${trail}${SEP}${reason}`;

export type FunnelField =
  | { kind: 'reached' | 'repeat' | 'repeatedPeople'; trail: string }
  | { kind: 'refusal' | 'refusedPeople' | 'turnedAway'; trail: string; reason: string }
  | { kind: 'time' | 'sinceStart' | 'waiting'; trail: string; bucket: number };

const KINDS = {
  p: 'reached',
  s: 'repeat',
  S: 'repeatedPeople',
  r: 'refusal',
  R: 'refusedPeople',
  t: 'time',
  c: 'sinceStart',
  x: 'turnedAway',
  w: 'waiting',
} as const;

export function parseField(field: string): FunnelField | undefined {
  const [k, trail, rest] = field.split(SEP);
  const kind = KINDS[k as keyof typeof KINDS];
  if (!kind || !trail) return undefined;
  if (kind === 'reached' || kind === 'repeat' || kind === 'repeatedPeople')
    return rest === undefined ? { kind, trail } : undefined;
  if (rest === undefined) return undefined;
  if (kind === 'refusal' || kind === 'refusedPeople' || kind === 'turnedAway') return { kind, trail, reason: rest };
  return /^\d+$/.test(rest) ? { kind, trail, bucket: Number(rest) } : undefined;
}

/** The index of the bucket a duration falls in (the last is everything beyond the last bound). */
const timeBucketOf = (seconds: number): number => {
  let i = 0;
  while (i < SCREEN_SECONDS_BUCKETS.length && seconds > SCREEN_SECONDS_BUCKETS[i]!) i += 1;
  return i;
};

/**
 * The trail after a request settled on `to`: one screen more, unless it stays where it is a
 * second time (a second profile update is a repeat, not a new screen) or the trail is full.
 */
export function nextTrail(trail: readonly string[], to: string): string[] {
  const last = trail[trail.length - 1];
  if (to === last && trail[trail.length - 2] === last) return [...trail];
  if (trail.length >= MAX_TRAIL) return [...trail];
  return [...trail, to];
}

/** The trail a proof carries, when it is one. */
function trailOfClaim(value: unknown): string[] | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const trail = value.split(TRAIL_SEP);
  return trail.length <= MAX_TRAIL && trail.every((label) => LABEL.test(label)) ? trail : undefined;
}

/** The journey a request belongs to: its proof's, else a new one (a code record may still name one: the effects say). */
export function journeyOfClaims(claims: FlowClaims | undefined, nowMs: number): FunnelJourney {
  const trail = trailOfClaim(claims?.trail);
  if (isJourneyId(claims?.journey) && trail) return { id: claims.journey, trail, fresh: false };
  return { id: newJourneyId(nowMs), trail: [], fresh: true };
}

/** The funnel's journey and its trail up to the screen an answer shows: what the answer's proof carries (src/flows/answer.ts). */
export interface FunnelLineage {
  journey: string;
  trail: string;
}

/** The claims an answer's proof carries for the funnel. */
export const journeyClaims = (journey: FunnelJourney): FunnelLineage => ({
  journey: journey.id,
  trail: journey.trail.join(TRAIL_SEP),
});

type Node = StateNode<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every state's step, by key (null where the state has no number). */
function stepsByState(machine: AnyStateMachine = loginFlowMachine): Map<string, StepId | null> {
  return new Map(
    stateNodes(machine.root as Node).map((node) => [
      node.key,
      node.tags.map(stepOfTag).find((s): s is StepId => s !== undefined) ?? null,
    ]),
  );
}
const STEPS = stepsByState();
/** A state as the metrics name it: its step number, or its name where it has none (the login screen). */
export const stepLabel = (state: string): string => String(STEPS.get(state) ?? state);

/** Which journeys' diagrams have a transition (`from>to`) or a screen (`from`): the `journey` label of the metrics. */
interface JourneyIndex {
  edges: Map<string, string[]>;
  screens: Map<string, string[]>;
}

function journeyIndexOf(diagrams: readonly JourneyDiagram[]): JourneyIndex {
  const edges = new Map<string, string[]>();
  const screens = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, id: string) => {
    const ids = map.get(key) ?? [];
    if (!ids.includes(id)) ids.push(id);
    map.set(key, ids);
  };
  for (const diagram of diagrams) {
    for (const action of diagram.actions) add(edges, `${action.from}>${action.to}`, diagram.id);
    for (const screen of diagram.screens) add(screens, screen.state, diagram.id);
  }
  return { edges, screens };
}

const OTHER = ['other'];

/** The trail up to a screen a request reached without one (a code screen's record names only the journey): the shortest diagram trail to it. */
export function knownTrails(diagrams: readonly JourneyDiagram[]): Map<string, string[]> {
  const known = new Map<string, string[]>();
  for (const trail of diagrams.map(diagramTrail)) {
    trail.forEach((label, i) => {
      const found = known.get(label);
      if (!found || found.length > i + 1) known.set(label, trail.slice(0, i + 1));
    });
  }
  return known;
}

/**
 * Where a diagram's journey is complete: the first position of its end screen. What a person
 * does after it (adds a phone, saves the profile, comes back to 90) is counted on its own arrows
 * and screens, but never completes the journey again nor reopens it.
 */
export function completionIndex(trail: readonly string[]): number {
  const end = trail.length - 1;
  return end > 0 ? trail.indexOf(trail[end]!) : end;
}

/** A diagram's trail as the store's fields name it, and the trails where its people start (its first arrow) and complete (its end screen, first reached). */
interface DiagramKeys {
  id: string;
  key: string;
  started: string;
  completed: string;
}
function diagramKeys(diagram: JourneyDiagram): DiagramKeys {
  const trail = diagramTrail(diagram);
  const end = trail.length - 1;
  const done = completionIndex(trail);
  return {
    id: diagram.id,
    key: trail.join(TRAIL_SEP),
    started: trail.slice(0, Math.min(2, trail.length)).join(TRAIL_SEP),
    completed: end > 0 ? trail.slice(0, done + 1).join(TRAIL_SEP) : '',
  };
}

/** A diagram's trail: its first screen, then where each of its requests settled, as a journey's grows (nextTrail). */
export function diagramTrail(diagram: JourneyDiagram): string[] {
  const first = diagram.replayed[0];
  if (!first) return [];
  let trail = [stepLabel(first.from)];
  for (const request of diagram.replayed) {
    const to = request.states[request.states.length - 1];
    if (to !== undefined) trail = nextTrail(trail, stepLabel(to));
  }
  return trail;
}

let known: Promise<Map<string, string[]>> | undefined;
/** knownTrails of the journey diagrams, once per process. */
export const funnelKnownTrails = (): Promise<Map<string, string[]>> => (known ??= funnelDiagrams().then(knownTrails));

/** The journey's trail up to `from` (a state): its own when it ends there, else the shortest diagram trail there, else that screen alone. */
export function trailTo(journey: FunnelJourney, from: string, known: ReadonlyMap<string, string[]>): string[] {
  const label = stepLabel(from);
  if (journey.trail[journey.trail.length - 1] === label) return journey.trail;
  return known.get(label) ?? [label];
}

/**
 * Whether the journey is counted: one it carried in, or a new one on a first screen. A request
 * with no journey in the middle of a path (a trusted caller without proofs, a proof or code from
 * before the journeys had ids) would be a journey seen from its middle: it is left out, and so
 * are the requests that continue it (its answer carries no journey).
 */
export const counts = (journey: FunnelJourney): boolean => !journey.fresh || journey.trail.length <= 1;

/** The window of a journey closes CONVERSION_WINDOW_MS after the minute it started in (the minute buckets' edge). */
const windowClosesAt = (journeyId: string): number =>
  Math.floor(journeyStart(journeyId) / MINUTE_MS) * MINUTE_MS + CONVERSION_WINDOW_MS;

/**
 * How long a person may wait on a screen before they have stopped: on a code screen the code's
 * lifetime (past it the code they hold is refused), elsewhere `funnel.idle_seconds`.
 */
export interface IdleLimits {
  codeMs: number;
  otherMs: number;
}
export const DEFAULT_IDLE: IdleLimits = { codeMs: 300_000, otherMs: 900_000 };
const idleLimitsOf = (config: { otp: { ttl_seconds: number }; funnel: { idle_seconds: number } }): IdleLimits => ({
  codeMs: config.otp.ttl_seconds * 1000,
  otherMs: config.funnel.idle_seconds * 1000,
});

/** The screens where a person types a code (they take VERIFY_OTP), by step label. */
export function codeScreens(machine: AnyStateMachine = loginFlowMachine): Set<string> {
  const labels = stateNodes(machine.root as Node)
    .filter((node) => node.tags.includes(SETTLED) && Object.keys(node.config.on ?? {}).includes('VERIFY_OTP'))
    .map((node) => stepLabel(node.key));
  return new Set(labels);
}
const CODE_SCREENS = codeScreens();

/** The journey's current count once it acts on `trail`: waiting there until its idle limit has passed. */
function waitingOn(trail: readonly string[], at: number, idle: IdleLimits): { field: string; rank: number } {
  const minute = Math.ceil(
    (at + (CODE_SCREENS.has(trail[trail.length - 1]!) ? idle.codeMs : idle.otherMs)) / MINUTE_MS,
  );
  // A longer trail is always later; on the same trail, the later wait.
  return { field: waitingField(trail.join(TRAIL_SEP), minute), rank: trail.length * 1e8 + minute };
}

/** The store entry of one request; undefined when it counts for nothing (a journey past its window). */
export function entryOf(
  event: FunnelEvent & { from: string },
  known: ReadonlyMap<string, string[]>,
  idle: IdleLimits = DEFAULT_IDLE,
): FunnelEntry | undefined {
  const from = stepLabel(event.from);
  const accepted = event.outcome === 'ok' && event.to !== undefined;
  // An early resend on a first screen whose code record named its journey (already_sent while on
  // 14): that journey's refusal, on the code's screen, not on the first one.
  const joinedAt =
    !accepted && event.journey && !event.journey.fresh && event.journey.trail.length === 0 && event.toward !== undefined
      ? known.get(event.toward)
      : undefined;
  const found =
    event.journey && (accepted || !event.journey.fresh)
      ? { ...event.journey, trail: joinedAt ?? trailTo(event.journey, event.from, known) }
      : undefined;
  const journey = found && counts(found) ? found : undefined;
  const trail = journey ? journey.trail : (known.get(from) ?? [from]);
  const key = trail.join(TRAIL_SEP);
  if (!journey) {
    if (accepted) return { at: event.at, once: [], always: [] };
    // Refused at the door: on a first screen, before any journey began (a send every provider
    // refused, a cooldown, a limit, the challenge). A person turned away, on that screen and
    // toward where they were going. Nothing names them yet (no proof, no code; an id is never
    // made from what they typed), so each attempt is one person, and no set is kept for it:
    // a flood of refusals costs the store nothing per attempt but its counts.
    if (trail.length <= 1 && event.journey?.fresh !== false) {
      const toward = event.toward !== undefined && LABEL.test(event.toward) ? `${key}${TRAIL_SEP}${event.toward}` : key;
      return {
        at: event.at,
        once: [],
        always: [
          refusalField(key, event.outcome),
          refusedPeopleField(key, event.outcome),
          turnedAwayField(toward, event.outcome),
        ],
      };
    }
    return { at: event.at, once: [], always: [refusalField(key, event.outcome)] };
  }
  if (event.at >= windowClosesAt(journey.id)) return undefined;
  const at = journeyStart(journey.id);
  if (!accepted) {
    // A refused form is a person still at it; a wrong code gives a code no more time.
    const still = CODE_SCREENS.has(trail[trail.length - 1]!) ? {} : { current: waitingOn(trail, event.at, idle) };
    return {
      journey: journey.id,
      at,
      once: [{ field: refusedPeopleField(key, event.outcome) }],
      always: [refusalField(key, event.outcome)],
      ...still,
    };
  }
  const next = nextTrail(trail, stepLabel(event.to!));
  const current = waitingOn(next, event.at, idle);
  if (next.length === trail.length)
    return {
      journey: journey.id,
      at,
      once: [{ field: repeatedPeopleField(key) }],
      always: [repeatField(key)],
      current,
    };
  // Every screen of the trail is reached once: its prefixes, each the one before with a label more.
  const once: OnceCount[] = [];
  let prefix = next[0]!;
  for (let i = 1; i < next.length; i += 1) {
    once.push({ field: reachedField(prefix) });
    prefix = `${prefix}${TRAIL_SEP}${next[i]!}`;
  }
  const reached = prefix;
  const then = [sinceStartField(reached, timeBucketOf(Math.max(0, (event.at - at) / 1000)))];
  if (event.seconds !== undefined) then.push(timeField(key, timeBucketOf(event.seconds)));
  once.push({
    field: reachedField(reached),
    then,
    repeat: repeatField(reached),
    repeatOnce: repeatedPeopleField(reached),
  });
  return { journey: journey.id, at, once, always: [], current };
}

/** What the flow runner calls once per request; `undefined` when `funnel.enabled` is off. */
export type FunnelRecorder = (event: FunnelEvent) => void;

/** The journey diagrams are replayed once per process, for the labels and the views. */
let diagrams: Promise<JourneyDiagram[]> | undefined;
export const funnelDiagrams = (): Promise<JourneyDiagram[]> => (diagrams ??= journeyDiagrams());

const heard = new WeakSet<object>();
/** Distinct stored fields whose labels are remembered; past it they start over (fields are few: the diagrams' trails). */
const LABELLED_FIELDS = 10_000;

export function createFunnelRecorder(
  deps: Pick<Deps, 'config' | 'metrics' | 'funnel' | 'log'>,
): FunnelRecorder | undefined {
  if (!deps.config.funnel.enabled) return undefined;
  let queued: FunnelEvent[] = [];
  const idle = idleLimitsOf(deps.config);
  let ready: { index: JourneyIndex; known: Map<string, string[]>; trails: DiagramKeys[] } | undefined;
  const readyNow = funnelDiagrams().then(
    (found) => (ready = { index: journeyIndexOf(found), known: knownTrails(found), trails: found.map(diagramKeys) }),
  );
  // Every journey's started and completed from 0, so the first completions move the ratio.
  deps.metrics.funnelJourneysKnown(JOURNEY_IDS);
  // The people the store counted, once each across the fleet: labelled with every diagram whose path begins with the trail reached.
  // Heard once per tally, however many apps share these dependencies.
  if (!heard.has(deps.funnel)) {
    heard.add(deps.funnel);
    // Every stored field's labels, worked out once: the same few fields come back with every journey.
    const labelled = new Map<
      string,
      { journeys: readonly string[]; step: string; stages: Array<[string, FunnelStage]> } | null
    >();
    const labelsOf = (field: string, trails: readonly DiagramKeys[]) => {
      let labels = labelled.get(field);
      if (labels !== undefined) return labels;
      const parsed = parseField(field);
      const steps = parsed?.kind === 'reached' ? parsed.trail.split(TRAIL_SEP) : [];
      const step = steps[steps.length - 1];
      if (parsed?.kind === 'reached' && step !== undefined) {
        // A screen is reached once per person: coming back to it (90 after adding a phone) is no new arrival.
        const journeys =
          steps.indexOf(step) === steps.length - 1
            ? trails
                .filter((t) => t.key === parsed.trail || t.key.startsWith(parsed.trail + TRAIL_SEP))
                .map((t) => t.id)
            : [];
        const stages: Array<[string, FunnelStage]> = [];
        for (const t of trails) {
          if (t.started === parsed.trail) stages.push([t.id, 'started']);
          if (t.completed === parsed.trail) stages.push([t.id, 'completed']);
        }
        labels = {
          journeys: journeys.length > 0 ? journeys : steps.indexOf(step) === steps.length - 1 ? OTHER : [],
          step,
          stages,
        };
      } else labels = null;
      if (labelled.size >= LABELLED_FIELDS) labelled.clear();
      labelled.set(field, labels);
      return labels;
    };
    deps.funnel.onStored((fields) => {
      if (!ready) return;
      for (const field of fields) {
        const labels = labelsOf(field, ready.trails);
        if (!labels) continue;
        for (const journey of labels.journeys) deps.metrics.funnelReached(journey, labels.step);
        for (const [journey, stage] of labels.stages) deps.metrics.funnelJourney(journey, stage);
      }
    });
  }
  const drain = () => {
    const events = queued;
    queued = [];
    const { index, known } = ready!;
    for (const event of events) {
      const from = event.from ?? (event.input ? (resumePointFor(event.input)?.state ?? 'refused') : undefined);
      if (from === undefined) continue;
      // The queued event is the recorder's own now: completed in place rather than copied.
      event.from = from;
      const entry = entryOf(event as FunnelEvent & { from: string }, known, idle);
      if (entry && (entry.once.length > 0 || entry.always.length > 0)) deps.funnel.add(entry);
      // Prometheus counts requests here (rates, alerts); the people it counts are the store's (onStored above).
      const accepted = event.outcome === 'ok' && event.to !== undefined;
      const journeys = (accepted ? index.edges.get(`${from}>${event.to}`) : index.screens.get(from)) ?? OTHER;
      const step = stepLabel(from);
      for (const journey of journeys) deps.metrics.funnelRequest(journey, step, event.outcome, event.seconds);
    }
  };
  const schedule = () => {
    if (ready) setImmediate(drain);
    else
      void readyNow.then(drain, (err: unknown) =>
        deps.log.warn(
          { err: { message: err instanceof Error ? err.message : 'error' } },
          'funnel: journey diagrams failed',
        ),
      );
  };
  return (event) => {
    if (queued.push(event) === 1) schedule();
  };
}
