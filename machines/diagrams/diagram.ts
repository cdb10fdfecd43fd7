import type { AnyStateMachine, StateNode } from 'xstate';
import { EVENT_ACTION, FE_ACTIONS, MACHINE_ACTIONS, PROOF_KIND, type FeAction, type UserEventType } from '../actions';
import type { ProofField } from '../effects';
import { PASSKEY_STEP, SETTLED, STEP_INFO, stepOfTag, type StepId } from '../steps';

/*
 * Diagrams generated from the machine definitions, never drawn by hand: a Mermaid
 * stateDiagram-v2 made by walking the state nodes (states labelled with their step, compound
 * states drawn around their children, edges with their event and guard, entry points as edges
 * from `[*]`), and the table of steps (screen, meaning, the actions that reach it).
 */

type Node = StateNode<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Transition {
  eventType: string;
  guard?: unknown;
  target?: readonly Node[];
  actions?: readonly unknown[];
}

export interface Edge {
  source: Node;
  target: Node;
  eventType: string;
  /** The guard as defined (`name`, `{ type, params }` or a function), if any. */
  guard?: unknown;
  /** The actions as defined (`name`, `{ type, params }` or a function). */
  actions: readonly unknown[];
  label: string;
}

const childrenOf = (node: Node): Node[] => Object.values(node.states ?? {}) as Node[];

/** Every state node under `node`, depth first, in definition order. */
export function stateNodes(node: Node): Node[] {
  return childrenOf(node).flatMap((child) => [child, ...stateNodes(child)]);
}

/** A state's Mermaid id is its key: keys are unique across a machine (checked by `renderMermaid`). */
const mermaidId = (node: Node) => node.key;

const stepsOf = (node: Node): StepId[] => node.tags.map(stepOfTag).filter((s): s is StepId => s !== undefined);

function paramText(value: unknown): string {
  if (Array.isArray(value)) return value.map(paramText).join('/');
  if (value !== null && typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${k}=${paramText(v)}`)
      .join(' ');
  return String(value);
}

/** `name` or `name(key=value ...)` of a guard; functions (inline guards) by their name. */
export function guardLabel(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    // and([...]), or([...]), not(...) keep their operands in `guards`.
    const operands = (guard as { guards?: unknown[] }).guards;
    return operands ? `${guard.name}(${operands.map((g) => guardLabel(g)).join(', ')})` : guard.name || 'inline';
  }
  const { type, params } = guard as { type?: string; params?: unknown };
  if (params === undefined || params === null || typeof params === 'function') return type ?? 'guard';
  return `${type}(${paramText(params)})`;
}

/** The event part of an edge label: `VERIFY_OTP`, `verifyOtp done`, `ingestLogin failed`, or nothing for eventless. */
function eventLabel(eventType: string): string {
  const done = /^xstate\.done\.actor\.(.+)$/.exec(eventType);
  if (done) return `${done[1]} done`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(eventType);
  if (error) return `${error[1]} failed`;
  return eventType;
}

const transitionsOf = (node: Node): Transition[] => [
  ...((node.always ?? []) as Transition[]),
  ...[...(node.transitions as Map<string, Transition[]>).values()].flat(),
];

/** Every transition of the machine, with the label the diagram shows. */
export function edgesOf(machine: AnyStateMachine): Edge[] {
  const edges: Edge[] = [];
  for (const source of stateNodes(machine.root as Node)) {
    const byEvent = new Map<string, Transition[]>();
    for (const t of transitionsOf(source)) byEvent.set(t.eventType, [...(byEvent.get(t.eventType) ?? []), t]);
    for (const [eventType, list] of byEvent) {
      list.forEach((t) => {
        const guard = guardLabel(t.guard);
        // The last unguarded choice among guarded ones is the "else" branch.
        const condition = guard ? `[${guard}]` : list.length > 1 ? '[else]' : '';
        const label = [eventLabel(eventType), condition].filter(Boolean).join(' ');
        for (const target of t.target ?? [source])
          edges.push({ source, target, eventType, guard: t.guard, actions: t.actions ?? [], label });
      });
    }
  }
  return edges;
}

const clean = (text: string) =>
  text
    .replace(/[:;#{}"]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** A way into the machine other than its initial state: drawn as `[*] --> target : label`. */
interface MermaidEntry {
  /** The key of the state entered. */
  target: string;
  label: string;
}

export interface MermaidOptions {
  /** Render only these state keys (and edges between them); a compound state is kept with any of its children. */
  only?: ReadonlySet<string>;
  /** Render only the edges this accepts (among those kept by `only`). */
  edges?: (edge: Edge) => boolean;
  /** Draw these entry points instead of the machine's initial state. */
  entries?: readonly MermaidEntry[];
}

/**
 * The machine as a Mermaid stateDiagram-v2 (flat or nested states). Every state is declared
 * inside its compound state and every edge is drawn at the top level, so edges may cross
 * compound states. A compound state's initial state is drawn only when an edge enters the
 * compound state itself.
 */
export function renderMermaid(machine: AnyStateMachine, options: MermaidOptions = {}): string {
  const all = stateNodes(machine.root as Node);
  const twice = all.map((n) => n.key).find((key, i, keys) => keys.indexOf(key) !== i);
  if (twice) throw new Error(`diagram: state key "${twice}" is used twice in ${machine.id}`);
  const keep = (node: Node): boolean => !options.only || options.only.has(node.key) || childrenOf(node).some(keep);
  const entered = new Set(edgesOf(machine).map((e) => e.target));
  const lines = ['stateDiagram-v2'];
  const settled: string[] = [];
  const failed: string[] = [];

  const declare = (node: Node, indent: string) => {
    const steps = stepsOf(node);
    const title = steps.length ? `${steps.join('/')} ${node.key}` : node.key;
    const id = mermaidId(node);
    if (node.tags.includes(SETTLED)) (node.tags.includes('failed') ? failed : settled).push(id);
    const children = childrenOf(node).filter(keep);
    if (children.length === 0) {
      lines.push(`${indent}state "${clean(title)}" as ${id}`);
      return;
    }
    lines.push(`${indent}state "${clean(title)}" as ${id} {`);
    const initial = (node.config as { initial?: string }).initial;
    if (entered.has(node) && initial && node.states[initial] && keep(node.states[initial] as Node))
      lines.push(`${indent}  [*] --> ${mermaidId(node.states[initial] as Node)}`);
    for (const child of children) declare(child, `${indent}  `);
    lines.push(`${indent}}`);
  };

  const root = machine.root as Node;
  for (const node of childrenOf(root).filter(keep)) declare(node, '  ');
  if (options.entries) {
    const byKey = new Map(all.map((n) => [n.key, n]));
    for (const entry of options.entries) {
      const target = byKey.get(entry.target);
      if (!target) throw new Error(`diagram: no state "${entry.target}" in ${machine.id}`);
      if (keep(target)) lines.push(`  [*] --> ${mermaidId(target)} : ${clean(entry.label)}`);
    }
  } else {
    const initial = (root.config as { initial?: string }).initial;
    if (initial && root.states[initial] && keep(root.states[initial] as Node))
      lines.push(`  [*] --> ${mermaidId(root.states[initial] as Node)}`);
  }
  for (const edge of edgesOf(machine)) {
    if (!keep(edge.source) || !keep(edge.target) || (options.edges && !options.edges(edge))) continue;
    const label = clean(edge.label);
    lines.push(`  ${mermaidId(edge.source)} --> ${mermaidId(edge.target)}${label ? ` : ${label}` : ''}`);
  }
  for (const node of all) if (node.type === 'final' && keep(node)) lines.push(`  ${mermaidId(node)} --> [*]`);
  if (settled.length)
    lines.push('  classDef settled fill:#e7f1ff,stroke:#3178c6', `  class ${settled.join(',')} settled`);
  if (failed.length) lines.push('  classDef failed fill:#fdecea,stroke:#c62828', `  class ${failed.join(',')} failed`);
  return lines.join('\n');
}

const isAutomatic = (eventType: string) => eventType === '' || eventType.startsWith('xstate.');

/**
 * For every state, the optimised actions whose one request passes through it or settles on it:
 * from each settled state, follow a user event, then only eventless and effect-completion
 * transitions, up to the next settled state.
 */
export function reachedBy(machine: AnyStateMachine): Map<Node, Set<FeAction>> {
  const reached = new Map<Node, Set<FeAction>>();
  const edges = edgesOf(machine);
  const from = (node: Node) => edges.filter((e) => e.source === node);
  for (const start of stateNodes(machine.root as Node).filter((n) => n.tags.includes(SETTLED))) {
    for (const edge of from(start)) {
      const action = EVENT_ACTION[edge.eventType as UserEventType] as FeAction | undefined;
      if (!action) continue;
      const queue = [edge.target];
      const seen = new Set<Node>();
      while (queue.length) {
        const node = queue.shift()!;
        if (seen.has(node)) continue;
        seen.add(node);
        reached.set(node, (reached.get(node) ?? new Set()).add(action));
        if (node.tags.includes(SETTLED)) continue;
        for (const next of from(node)) if (isAutomatic(next.eventType)) queue.push(next.target);
      }
    }
  }
  return reached;
}

export interface StepRow {
  step: StepId;
  screen: string;
  meaning: string;
  states: string[];
  settles: boolean;
  reachedBy: FeAction[];
  proof?: string;
}

/**
 * One row per step the machine's states carry, in step order: the contract's steps, or the ones
 * outside it (the passkeys', machines/steps.ts PASSKEY_STEP), which the docs list apart.
 */
export function stepTable(machine: AnyStateMachine, which: 'contract' | 'passkeys' = 'contract'): StepRow[] {
  const passkeySteps: readonly StepId[] = Object.values(PASSKEY_STEP);
  const wanted = (step: StepId) => passkeySteps.includes(step) === (which === 'passkeys');
  // The contract's table names the contract's actions only (a passkey also reaches 90: its own table says so).
  const listed = which === 'contract' ? FE_ACTIONS : MACHINE_ACTIONS;
  const reached = reachedBy(machine);
  const rows = new Map<StepId, StepRow>();
  for (const node of stateNodes(machine.root as Node)) {
    for (const step of stepsOf(node).filter(wanted)) {
      const info = STEP_INFO[step];
      const row = rows.get(step) ?? {
        step,
        screen: info.screen,
        meaning: info.meaning,
        states: [],
        settles: false,
        reachedBy: [],
      };
      row.states.push(node.key);
      row.settles ||= node.tags.includes(SETTLED);
      const actions = new Set([...row.reachedBy, ...(reached.get(node) ?? [])]);
      row.reachedBy = listed.filter((a) => actions.has(a));
      const proof = (node.meta as { proof?: { field: ProofField } } | undefined)?.proof;
      if (proof) row.proof = `${proof.field} (${PROOF_KIND[proof.field]})`;
      rows.set(step, row);
    }
  }
  const order = (step: StepId) => (typeof step === 'number' ? step : parseFloat(step) + 0.5);
  return [...rows.values()].sort((a, b) => order(a.step) - order(b.step));
}
