import type { AnyStateMachine } from 'xstate';
import { edgesOf, guardLabel, reachedBy, renderMermaid, stateNodes, stepTable, type Edge, type MermaidOptions } from '../../machines/diagram';
import { journeys, replayJourney, type Journey } from '../../machines/journeys';
import { loginFlowMachine, type RestoreParams } from '../../machines/login-flow.machine';
import { ACTION_ENTRY } from '../../machines/requests';
import { otpRecordMachine } from '../../machines/otp-record.machine';
import { EVENT_ACTION, type FeAction } from '../../machines/steps';
import type { DocGenerator } from './generator';

/*
 * docs/flows.md: the step diagrams product and QA review, generated from the machine
 * definitions (diagrams, step table, resume table) and from replaying SPEC.md's typical
 * sequences against the machine with fake effects (journeys). Never edited by hand.
 */

const ACTIONS = Object.keys(ACTION_ENTRY) as FeAction[];
const code = (text: string | number) => `\`${text}\``;
const mermaid = (text: string) => ['```mermaid', text, '```'].join('\n');

function stepRows(machine: AnyStateMachine): string {
  const rows = stepTable(machine).map(
    (r) =>
      `| ${r.step} | ${code(r.screen)} | ${r.states.map(code).join(', ')} | ${r.settles ? 'waits for the user' : 'passed'} | ${r.meaning} | ${r.reachedBy.join(', ') || '-'} | ${r.proof ? code(r.proof) : '-'} |`,
  );
  return ['| Step | Screen | State | Kind | Meaning | Reached by | Proof handed out |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

const actionOfEntry = (entry: string) => ACTIONS.find((a) => ACTION_ENTRY[a] === entry) ?? entry;

/** The params of a `restoresAt` guard on an edge out of `restoring`. */
function restoreParams(edge: Edge): RestoreParams | undefined {
  const guard = edge.guard as { type?: string; params?: RestoreParams } | undefined;
  return edge.source.key === 'restoring' && typeof guard === 'object' && guard.type === 'restoresAt' ? guard.params : undefined;
}

/** The routing of `restoring`: which request resumes where. */
function resumeRows(machine: AnyStateMachine): string {
  const rows = edgesOf(machine)
    .filter((e) => e.source.key === 'restoring')
    .map((edge) => {
      const params = restoreParams(edge);
      if (!params) return `| any other request | - | ${edge.guard ? `a proof (${guardLabel(edge.guard)})` : 'no proof'} | ${code(edge.target.key)} |`;
      const on = [params.flows && `flow ${params.flows.join(' / ')}`, params.phases && `phase ${params.phases.join(' / ')}`].filter(Boolean).join(', ') || '-';
      const proof = params.trusted ? 'none: trusted caller (x-internal-key)' : params.step !== undefined ? `${params.kind} proof of step ${params.step}` : 'none';
      return `| ${actionOfEntry(params.entry)} | ${on} | ${proof} | ${code(edge.target.key)} |`;
    });
  return ['| Action | Request | Proof | Resumes at |', '|---|---|---|---|', ...rows].join('\n');
}

/** The states one action's request can visit: where it resumes, what it passes, where it settles. */
function viewOf(machine: AnyStateMachine, action: FeAction): MermaidOptions {
  const only = new Set<string>(['restoring', 'refused']);
  for (const edge of edgesOf(machine)) if (restoreParams(edge)?.entry === ACTION_ENTRY[action]) only.add(edge.target.key);
  for (const [node, actions] of reachedBy(machine)) if (actions.has(action)) only.add(node.key);
  // Out of `restoring`, only this action's routes (and the refusals); elsewhere, only this action's event.
  const userEvent = Object.entries(EVENT_ACTION).find(([, a]) => a === action)?.[0];
  const edges = (edge: Edge) => {
    if (edge.source.key === 'restoring') return edge.target.key === 'refused' || restoreParams(edge)?.entry === ACTION_ENTRY[action];
    return edge.eventType === userEvent || edge.eventType === '' || edge.eventType.startsWith('xstate.');
  };
  return { only, edges };
}

async function journeySection(journey: Journey): Promise<string> {
  const replayed = await replayJourney(journey);
  const rows = replayed.map((r, i) => {
    const answer = r.answer.ok
      ? `next_step ${r.answer.nextStep}, flow ${code(r.answer.flow ?? '-')}${r.answer.accessToken ? ', access_token' : ''}${r.answer.proof ? `, ${code(r.answer.proof.field)}` : ''}`
      : `refused: ${code(r.answer.failure?.reason ?? '?')}`;
    return `| ${i + 1} | ${r.action} | ${r.proofUsed ? code(r.proofUsed) : '-'} | ${r.steps.join(' → ') || '-'} | ${r.calls.map((c) => c.name).join(', ') || '-'} | ${answer} |`;
  });
  return [
    `### ${journey.name}`,
    '',
    `SPEC.md: ${journey.spec}.`,
    '',
    '| # | Request | Proof sent | Steps | Effects called | Answer |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

function otpRecordSection(machine: AnyStateMachine): string {
  const rows = stateNodes(machine.root).map((node) => {
    const events = [...new Set(edgesOf(machine).filter((e) => e.source === node).map((e) => e.eventType))];
    return `| ${code(node.key)} | ${node.type === 'final' ? 'final' : 'waits'} | ${events.map(code).join(', ') || '-'} |`;
  });
  return ['| State | Kind | Events |', '|---|---|---|', ...rows].join('\n');
}

export async function renderFlows(): Promise<string> {
  const sections = [
    '# Login flows',
    '',
    '<!-- Generated by `npm run docs` from machines/ (scripts/docs/flows.ts). Do not edit by hand. -->',
    '',
    'Every optimised action is one event sent to the login-journey machine: the request resumes the',
    'state it names (its `flow`, `phase` and proof), the machine runs its effects and settles on the',
    'next step the user must act on. Blue states wait for the user (the request answers their',
    '`next_step`); the others are passed within one request. Why the journey is shaped this way, and',
    'what the step numbers SPEC.md does not explain mean: [flows-design.md](flows-design.md).',
    '',
    `## The login journey (${code(loginFlowMachine.id)})`,
    '',
    mermaid(renderMermaid(loginFlowMachine)),
    '',
    '### Steps',
    '',
    stepRows(loginFlowMachine),
    '',
    '### Where each request resumes',
    '',
    resumeRows(loginFlowMachine),
    '',
    '## One request per action',
    '',
    'The same machine, cut to the states one action can resume, pass or settle on.',
    '',
  ];
  for (const action of ACTIONS) {
    sections.push(`### ${action}`, '', mermaid(renderMermaid(loginFlowMachine, viewOf(loginFlowMachine, action))), '');
  }
  sections.push(
    '## Journeys',
    '',
    "SPEC.md's typical frontend sequences as the optimised actions serve them, replayed against the",
    'machine with fake effects (the same replays the machine tests run). Each request sends the proof',
    'the previous answers handed out.',
    '',
  );
  for (const journey of journeys) sections.push(await journeySection(journey), '');
  sections.push(
    `## The OTP record (${code(otpRecordMachine.id)})`,
    '',
    'The lifecycle of one stored code (SPEC.md, "States and transitions / OTP record"), stepped with',
    "XState's pure `transition()` by the OTP store.",
    '',
    mermaid(renderMermaid(otpRecordMachine)),
    '',
    otpRecordSection(otpRecordMachine),
    '',
  );
  return sections.join('\n');
}

export const flowsDoc: DocGenerator = {
  path: 'docs/flows.md',
  render: renderFlows,
};
