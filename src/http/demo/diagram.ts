import type { AnyStateMachine } from 'xstate';
import {
  journeyDiagrams,
  loginFlowMachine,
  RESUME_POINTS,
  type FeAction,
  type JourneyDiagram,
  type JourneyId,
} from '../../../machines';

/*
 * The demo page's step panel: the screens of the journey diagrams (docs/journeys.md, GET /flows),
 * each once, with the same Italian names and step numbers, the journeys each belongs to, and the
 * user's actions between them with what the service calls on the way. Built from the journey
 * diagrams (machines/diagrams/journey-diagrams.ts, which read the login machine and machines/diagrams/labels.ts)
 * when the routes are mounted, never copied by hand.
 */

/** A screen: a state of the login machine where a request settles (or a journey starts). */
interface DiagramScreen {
  /** The state's key (unique across the machine): what the page highlights. */
  id: string;
  /** Its step number (`next_step`), or null for the two start screens. */
  step: string | null;
  /** `Inserisci il codice SMS`. */
  name: string;
  /** `14 · Inserisci il codice SMS`, as the diagrams print it. */
  title: string;
  /** What the frontend shows there. */
  shows: string;
  /** The journeys that pass through it. */
  journeys: JourneyId[];
}

/** A user action between two screens (one request). */
interface DiagramAction {
  from: string;
  to: string;
  /** `invia il codice`. */
  label: string;
  action: FeAction;
  /** What the service calls upstream on the way. */
  notes: string[];
  /** The journeys that take it. */
  journeys: JourneyId[];
}

interface DiagramJourney {
  id: JourneyId;
  title: string;
  /** Its screens, in the order the journey first shows them. */
  screens: string[];
}

export interface DemoDiagram {
  machine: string;
  /** Every screen once, the start screens first, then by step number. */
  screens: DiagramScreen[];
  actions: DiagramAction[];
  journeys: DiagramJourney[];
  /** The states a journey is in before its first answer: FeLogin's, and FeRegister's without a proof. */
  start: { login: string; register: string };
}

/** The state FeLogin, or FeRegister without a proof, resumes at: read from the resume table. */
function startState(action: FeAction): string {
  const point = RESUME_POINTS.find((p) => p.action === action && !p.proof && !p.trusted);
  if (!point) throw new Error(`demo diagram: no state resumes ${action} without a proof`);
  return point.state;
}

const stepOrder = (step: string | null) =>
  step === null ? -1 : Number.parseFloat(step) + (/\D$/.test(step) ? 0.5 : 0);

/** The panel's data, from the journeys' diagrams. */
export function demoDiagramOf(
  diagrams: readonly JourneyDiagram[],
  machine: AnyStateMachine = loginFlowMachine,
): DemoDiagram {
  const screens = new Map<string, DiagramScreen>();
  const actions = new Map<string, DiagramAction>();
  for (const diagram of diagrams) {
    for (const screen of diagram.screens) {
      const known = screens.get(screen.state);
      if (known) {
        if (!known.journeys.includes(diagram.id)) known.journeys.push(diagram.id);
        continue;
      }
      screens.set(screen.state, {
        id: screen.state,
        step: screen.step === null ? null : String(screen.step),
        name: screen.name,
        title: screen.title,
        shows: screen.shows,
        journeys: [diagram.id],
      });
    }
    for (const a of diagram.actions) {
      const key = `${a.from} ${a.to} ${a.label}`;
      const known = actions.get(key);
      if (!known)
        actions.set(key, {
          from: a.from,
          to: a.to,
          label: a.label,
          action: a.action,
          notes: a.notes,
          journeys: [diagram.id],
        });
      else if (!known.journeys.includes(diagram.id)) known.journeys.push(diagram.id);
    }
  }
  return {
    machine: machine.id,
    screens: [...screens.values()].sort((a, b) => stepOrder(a.step) - stepOrder(b.step)),
    actions: [...actions.values()],
    journeys: diagrams.map((d) => ({ id: d.id, title: d.title, screens: d.screens.map((s) => s.state) })),
    start: { login: startState('FeLogin'), register: startState('FeRegister') },
  };
}

/** The panel's data for the login machine: its journeys replayed (a few milliseconds). */
export async function demoDiagram(): Promise<DemoDiagram> {
  return demoDiagramOf(await journeyDiagrams());
}
