import type { AnyStateMachine, StateNode } from 'xstate';
import { ACTIONS, type FeAction, type UserEventType } from '../actions';
import { edgesOf, stateNodes, type Edge } from './diagram';
import { journeys, replayJourney, type Journey, type JourneyId, type ReplayedRequest } from './journeys';
import { actionLabel, isScreenLabel, LABELS, refusalLabel, screenTitle, stateLabel } from './labels';
import { ADMISSION_REFUSALS, CODE_REFUSALS, loginFlowMachine, type FlowFailureReason } from '../login-flow.machine';
import { FAILED, SETTLED, STEP_INFO, stepOfTag, type StepId } from '../steps';

/*
 * One diagram per journey, for product and QA: only what the user sees and does. Each journey
 * of machines/diagrams/journeys.ts is replayed against the machine (the fake world of its replays), and
 * every request becomes one arrow: from the screen it started on to the screen it settled on,
 * labelled with the user's action, with the states it passed on the way as a small note of what
 * the service did. Refusal edges are left out of the picture and listed per journey instead,
 * read from the machine's transitions into `refused` along the same requests. Every word comes
 * from machines/diagrams/labels.ts. The whole machine's engineering diagram is machines/diagrams/diagram.ts's.
 */

type Node = StateNode<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A screen of the journey: a state where one of its requests starts or settles. */
export interface JourneyScreen {
  state: string;
  step: StepId | null;
  /** The screen's name (labels.ts): `Inserisci il codice SMS`. */
  name: string;
  /** With its step: `14 · Inserisci il codice SMS`. */
  title: string;
  /** What the frontend shows there (labels.ts). */
  shows: string;
  /** The step's screen name in the API (`otp_sms`; STEP_INFO), where it has a step. */
  screen: string | null;
}

/** One arrow: the user's action on a screen, what the service did, the screen it led to. */
export interface JourneyAction {
  from: string;
  to: string;
  action: FeAction;
  event: UserEventType;
  /** The user's action in Italian (`invia il codice`). */
  label: string;
  /** The upstream calls the service made on the way, in order (`verifica il codice SMS`, `cerca l'utente per telefono`). */
  notes: string[];
  /** The states passed on the way (their keys). */
  passed: string[];
  /** The requests of the journey (1-based) that took this arrow. */
  requests: number[];
}

/** A refusal one of the journey's requests can meet: where, which mistake, which `reason`. */
interface JourneyRefusal {
  /** The screen the user is on (and stays on). */
  at: string;
  action: FeAction;
  reason: FlowFailureReason;
  /** `data.field` of the refusal, where the machine names one. */
  field?: string;
  /** The mistake, in Italian (labels.ts). */
  mistake: string;
}

export interface JourneyDiagram {
  id: JourneyId;
  /** The Italian title (labels.ts). */
  title: string;
  /** The journey's name in machines/diagrams/journeys.ts and docs/flows.md. */
  name: string;
  spec: string;
  screens: JourneyScreen[];
  actions: JourneyAction[];
  refusals: JourneyRefusal[];
  /** The replay the diagram was read from, request by request. */
  replayed: ReplayedRequest[];
}

const REFUSED = 'refused';

/** The reasons (and `data.field`) an edge into `refused` answers, read from its actions. */
export function refusalsOf(
  edge: Pick<Edge, 'actions' | 'label'>,
): Array<{ reason: FlowFailureReason; field?: string }> {
  const found: Array<{ reason: FlowFailureReason; field?: string }> = [];
  for (const action of edge.actions) {
    const { type, params } = (typeof action === 'string' ? { type: action } : action) as {
      type?: string;
      params?: unknown;
    };
    if (type === 'refuse') {
      const { reason, data } = params as { reason: FlowFailureReason; data?: { field?: unknown } };
      found.push({ reason, ...(typeof data?.field === 'string' ? { field: data.field } : {}) });
    } else if (type === 'refuseCode') found.push(...CODE_REFUSALS.map((reason) => ({ reason })));
    else if (type === 'refuseRequest') found.push(...ADMISSION_REFUSALS.map((reason) => ({ reason })));
  }
  if (found.length === 0) throw new Error(`journey diagrams: the edge "${edge.label}" into ${REFUSED} says no reason`);
  return found;
}

const stepOfNode = (node: Node): StepId | null =>
  node.tags.map(stepOfTag).find((s): s is StepId => s !== undefined) ?? null;

function nodesByKey(machine: AnyStateMachine): Map<string, Node> {
  return new Map(stateNodes(machine.root as Node).map((node) => [node.key, node]));
}

function screenOf(nodes: Map<string, Node>, state: string): JourneyScreen {
  const node = nodes.get(state);
  if (!node) throw new Error(`journey diagrams: no state "${state}"`);
  if (!node.tags.includes(SETTLED))
    throw new Error(`journey diagrams: "${state}" is not a screen (a request does not settle there)`);
  const label = stateLabel(state);
  if (!label || !isScreenLabel(label))
    throw new Error(`journey diagrams: "${state}" has no screen label in machines/diagrams/labels.ts`);
  const step = stepOfNode(node);
  return {
    state,
    step,
    name: label.screen,
    title: screenTitle(state, step),
    shows: label.shows,
    screen: step === null ? null : STEP_INFO[step].screen,
  };
}

function noteOf(state: string): string {
  const label = stateLabel(state);
  if (!label || isScreenLabel(label))
    throw new Error(`journey diagrams: "${state}" has no note in machines/diagrams/labels.ts`);
  return label.note;
}

/** The journey's diagram, read from a replay of it (`replayJourney`) against the machine. */
function journeyDiagramOf(
  journey: Journey,
  replayed: ReplayedRequest[],
  machine: AnyStateMachine = loginFlowMachine,
): JourneyDiagram {
  const nodes = nodesByKey(machine);
  const edges = edgesOf(machine);
  const screens = new Map<string, JourneyScreen>();
  const actions: JourneyAction[] = [];
  const refusals = new Map<string, JourneyRefusal>();
  const addScreen = (state: string) => {
    if (!screens.has(state)) screens.set(state, screenOf(nodes, state));
  };

  replayed.forEach((request, index) => {
    if (!request.answer.ok)
      throw new Error(
        `journey diagrams: request ${index + 1} of "${journey.name}" was refused (${request.answer.failure?.reason})`,
      );
    const to = request.states[request.states.length - 1];
    if (to === undefined)
      throw new Error(`journey diagrams: request ${index + 1} of "${journey.name}" entered no state`);
    const previous = replayed[index - 1];
    if (previous && previous.states[previous.states.length - 1] !== request.from) {
      throw new Error(
        `journey diagrams: request ${index + 1} of "${journey.name}" resumes at ${request.from}, not where the previous one settled`,
      );
    }
    addScreen(request.from);
    addScreen(to);
    const event = loginEventOf(request.action);
    const label = actionLabel(event, request.states[0]!);
    if (label === undefined)
      throw new Error(
        `journey diagrams: no action label for ${event} into ${request.states[0]} in machines/diagrams/labels.ts`,
      );
    const passed = request.states.slice(0, -1);
    // The notes are the upstream calls (a state that invokes an effect); the checks in between need no words here.
    const notes = passed
      .filter((state) => (nodes.get(state)?.invoke.length ?? 0) > 0)
      .map(noteOf)
      .filter((note, i, all) => note !== all[i - 1]);
    const same = actions.find(
      (a) => a.from === request.from && a.to === to && a.label === label && a.notes.join('\n') === notes.join('\n'),
    );
    if (same) same.requests.push(index + 1);
    else
      actions.push({
        from: request.from,
        to,
        action: request.action,
        event,
        label,
        notes,
        passed,
        requests: [index + 1],
      });

    // The refusals this request could have met: its event refused on its screen, or a state it passed refusing.
    for (const edge of edges) {
      if (edge.target.key !== REFUSED) continue;
      const onScreen = edge.source.key === request.from && edge.eventType === event;
      if (!onScreen && !passed.includes(edge.source.key)) continue;
      for (const { reason, field } of refusalsOf(edge)) {
        const key = `${request.from} ${reason} ${field ?? ''}`;
        const mistake = refusalLabel(reason, field);
        if (mistake === undefined)
          throw new Error(`journey diagrams: no mistake for refusal "${reason}" in machines/diagrams/labels.ts`);
        if (!refusals.has(key))
          refusals.set(key, { at: request.from, action: request.action, reason, ...(field ? { field } : {}), mistake });
      }
    }
  });

  return {
    id: journey.id,
    title: LABELS.journeys[journey.id],
    name: journey.name,
    spec: journey.spec,
    screens: [...screens.values()],
    actions,
    refusals: [...refusals.values()],
    replayed,
  };
}

const loginEventOf = (action: FeAction): UserEventType => ACTIONS[action].event;

/** Every journey's diagram, in the order of machines/diagrams/journeys.ts. */
export async function journeyDiagrams(machine: AnyStateMachine = loginFlowMachine): Promise<JourneyDiagram[]> {
  const diagrams: JourneyDiagram[] = [];
  for (const journey of journeys) diagrams.push(journeyDiagramOf(journey, await replayJourney(journey), machine));
  return diagrams;
}

/** The steps the frontend is ever sent to (`next_step`): the steps of the states a request settles on, refusals aside. */
export function frontendSteps(machine: AnyStateMachine = loginFlowMachine): StepId[] {
  const steps = stateNodes(machine.root as Node)
    .filter((node) => node.tags.includes(SETTLED) && !node.tags.includes(FAILED))
    .map(stepOfNode)
    .filter((step): step is StepId => step !== null);
  return [...new Set(steps)];
}

const text = (value: string) => value.replace(/"/g, '#quot;');

/**
 * The journey as a Mermaid flowchart: its screens (the first one rounded at the ends), one
 * arrow per action labelled with it, and where the service did something on the way, a small
 * note on the arrow. No refusal, no guard.
 */
export function renderJourneyMermaid(diagram: JourneyDiagram): string {
  const lines = ['---', `title: "${text(diagram.title)}"`, '---', 'flowchart TD'];
  diagram.screens.forEach((screen, i) =>
    lines.push(i === 0 ? `  ${screen.state}(["${text(screen.title)}"])` : `  ${screen.state}("${text(screen.title)}")`),
  );
  const notes: string[] = [];
  for (const action of diagram.actions) {
    if (action.notes.length === 0) {
      lines.push(`  ${action.from} -->|"${text(action.label)}"| ${action.to}`);
      continue;
    }
    const note = `note${notes.length + 1}`;
    notes.push(note);
    lines.push(`  ${note}>"${action.notes.map(text).join('<br/>')}"]`);
    lines.push(`  ${action.from} -->|"${text(action.label)}"| ${note} --> ${action.to}`);
  }
  lines.push('  classDef screen fill:#e7f1ff,stroke:#3178c6,color:#10243e');
  lines.push('  classDef note fill:#fff8c4,stroke:#b59f3b,color:#4a3f00,font-size:12px');
  lines.push(`  class ${diagram.screens.map((s) => s.state).join(',')} screen`);
  if (notes.length) lines.push(`  class ${notes.join(',')} note`);
  return lines.join('\n');
}

/** For every screen of the journey, the actions that lead there (none for the first). */
export function actionsInto(diagram: JourneyDiagram, state: string): JourneyAction[] {
  return diagram.actions.filter((a) => a.to === state);
}
