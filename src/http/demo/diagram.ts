import type { AnyStateMachine } from 'xstate';
import { edgesOf, FAILED, loginFlowMachine, RESUME_POINTS, SETTLED, stateNodes, stepOfTag, type FeAction, type StepId } from '../../../machines';

/*
 * The step diagram of docs/flows.md in a form the demo page can draw and highlight: the login
 * machine's states (in definition order, with their steps and whether they wait for the user)
 * and its transitions with the same labels the Mermaid diagram shows. Built from the machine
 * definition through machines/diagram.ts, once at start-up, never copied by hand.
 */

export interface DiagramState {
  /** The state's key (unique across the machine): what the page highlights. */
  id: string;
  name: string;
  steps: string[];
  /**
   * `waits`: a request settles here (its `next_step`); `passed`: crossed within one request (a
   * journey, the compound state around its states, is listed as passed); `failed`: a refusal.
   */
  kind: 'waits' | 'passed' | 'failed';
  description?: string;
}

export interface DiagramEdge {
  from: string;
  to: string;
  label: string;
}

export interface DemoDiagram {
  machine: string;
  states: DiagramState[];
  edges: DiagramEdge[];
  /** The states a journey is in before its first answer: FeLogin's, and FeRegister's without a proof. */
  start: { login: string; register: string };
}

type Node = ReturnType<typeof stateNodes>[number];
const idOf = (node: Node) => node.key;

/** The state FeLogin, or FeRegister without a proof, resumes at: read from the resume table. */
function startState(action: FeAction): string {
  const point = RESUME_POINTS.find((p) => p.action === action && !p.proof && !p.trusted);
  if (!point) throw new Error(`demo diagram: no state resumes ${action} without a proof`);
  return point.state;
}

export function demoDiagram(machine: AnyStateMachine = loginFlowMachine): DemoDiagram {
  const states = stateNodes(machine.root).map((node): DiagramState => {
    const steps = node.tags.map(stepOfTag).filter((s): s is StepId => s !== undefined).map(String);
    const kind = node.tags.includes(FAILED) ? 'failed' : node.tags.includes(SETTLED) ? 'waits' : 'passed';
    return { id: idOf(node), name: node.key, steps, kind, ...(node.description ? { description: node.description } : {}) };
  });
  const edges = edgesOf(machine).map((e) => ({ from: idOf(e.source), to: idOf(e.target), label: e.label }));
  return {
    machine: machine.id,
    states,
    edges,
    start: { login: startState('FeLogin'), register: startState('FeRegister') },
  };
}
