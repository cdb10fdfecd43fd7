import type { AnyStateMachine, StateNode } from 'xstate';
import { journeyDiagrams, loginFlowMachine, resumePointFor, stateNodes, stepOfTag, type JourneyDiagram, type LoginFlowInput, type StepId } from '../../machines';
import { SCREEN_SECONDS_BUCKETS } from '../core/metrics';
import type { FunnelCounts } from '../domain/funnel/store';
import type { Deps } from '../domain/deps';

/*
 * The journey funnel, counted where the machine moves (docs/funnel.md). Each Fe* request is one
 * transition of the login machine: from the screen it resumed at (runStep's `from`) to the
 * screen it settled on (the last of its `states`), or refused there with a reason. That is
 * what is counted, by state name, so a new screen or transition of the machine is counted with
 * no code here, and a journey is a view chosen at read time: the transitions of its diagram
 * (machines/journey-diagrams.ts), so a new journey in machines/journeys.ts is one more view.
 *
 * Nothing about the person is kept: a field names two states, or a state and a reason, or a
 * state and a duration bucket. The request only queues a small record; counting it (Prometheus,
 * the store's batch) runs after the answer has gone (setImmediate), and writing the batch
 * runs on its own clock (src/domain/funnel/tally.ts).
 */

/** One request as the funnel sees it. */
export interface FunnelEvent {
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
}

const SEP = '|';
/** Fields of the store: a transition taken, a refusal met, a time on a screen (its bucket's index). */
export const edgeField = (from: string, to: string) => `e${SEP}${from}${SEP}${to}`;
export const refusalField = (from: string, reason: string) => `r${SEP}${from}${SEP}${reason}`;
export const timeField = (from: string, bucket: number) => `t${SEP}${from}${SEP}${bucket}`;

export type FunnelField = { kind: 'edge'; from: string; to: string } | { kind: 'refusal'; from: string; reason: string } | { kind: 'time'; from: string; bucket: number };

export function parseField(field: string): FunnelField | undefined {
  const [kind, from, rest] = field.split(SEP);
  if (!from || rest === undefined) return undefined;
  if (kind === 'e') return { kind: 'edge', from, to: rest };
  if (kind === 'r') return { kind: 'refusal', from, reason: rest };
  if (kind === 't' && /^\d+$/.test(rest)) return { kind: 'time', from, bucket: Number(rest) };
  return undefined;
}

/** The index of the bucket a duration falls in (the last is everything beyond the last bound). */
export const timeBucketOf = (seconds: number): number => {
  const i = SCREEN_SECONDS_BUCKETS.findIndex((bound) => seconds <= bound);
  return i === -1 ? SCREEN_SECONDS_BUCKETS.length : i;
};

type Node = StateNode<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every state's step, by key (null where the state has no number). */
export function stepsByState(machine: AnyStateMachine = loginFlowMachine): Map<string, StepId | null> {
  return new Map(stateNodes(machine.root as Node).map((node) => [node.key, node.tags.map(stepOfTag).find((s): s is StepId => s !== undefined) ?? null]));
}
const STEPS = stepsByState();
/** A state as the metrics name it: its step number, or its name where it has none (the login screen). */
export const stepLabel = (state: string): string => String(STEPS.get(state) ?? state);

/** Which journeys' diagrams have a transition (`from>to`) or a screen (`from`): the `journey` label of the metrics. */
export interface JourneyIndex {
  edges: Map<string, string[]>;
  screens: Map<string, string[]>;
}

export function journeyIndexOf(diagrams: readonly JourneyDiagram[]): JourneyIndex {
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

/** The counts of one request, and the journeys whose diagram it belongs to. */
export function countsOf(event: FunnelEvent & { from: string }, index: JourneyIndex): { counts: FunnelCounts; journeys: string[] } {
  const counts: FunnelCounts = {};
  let journeys: string[] | undefined;
  if (event.outcome === 'ok' && event.to !== undefined) {
    counts[edgeField(event.from, event.to)] = 1;
    journeys = index.edges.get(`${event.from}>${event.to}`);
  } else {
    counts[refusalField(event.from, event.outcome)] = 1;
    journeys = index.screens.get(event.from);
  }
  if (event.seconds !== undefined) counts[timeField(event.from, timeBucketOf(event.seconds))] = 1;
  return { counts, journeys: journeys ?? OTHER };
}

/** What the flow runner calls once per request; `undefined` when `funnel.enabled` is off. */
export type FunnelRecorder = (event: FunnelEvent) => void;

/** The journey diagrams are replayed once per process, for the labels and the views. */
let diagrams: Promise<JourneyDiagram[]> | undefined;
export const funnelDiagrams = (): Promise<JourneyDiagram[]> => (diagrams ??= journeyDiagrams());

export function createFunnelRecorder(deps: Pick<Deps, 'config' | 'metrics' | 'funnel' | 'log'>): FunnelRecorder | undefined {
  if (!deps.config.funnel.enabled) return undefined;
  let queued: FunnelEvent[] = [];
  let index: JourneyIndex | undefined;
  const indexReady = funnelDiagrams().then((found) => (index = journeyIndexOf(found)));
  const drain = () => {
    const events = queued;
    queued = [];
    const batch: FunnelCounts = {};
    for (const event of events) {
      const from = event.from ?? (event.input ? (resumePointFor(event.input)?.state ?? 'refused') : undefined);
      if (from === undefined) continue;
      const { counts, journeys } = countsOf({ ...event, from }, index!);
      for (const k in counts) batch[k] = (batch[k] ?? 0) + counts[k]!;
      const step = stepLabel(from);
      const reached = event.to === undefined ? undefined : stepLabel(event.to);
      for (const journey of journeys) deps.metrics.funnelRequest(journey, step, event.outcome, reached, event.seconds);
    }
    deps.funnel.add(batch);
  };
  const schedule = () => {
    if (index) setImmediate(drain);
    else void indexReady.then(drain, (err: unknown) => deps.log.warn({ err: { message: err instanceof Error ? err.message : 'error' } }, 'funnel: journey diagrams failed'));
  };
  return (event) => {
    if (queued.push(event) === 1) schedule();
  };
}
