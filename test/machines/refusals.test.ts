import { edgesOf } from '../../machines/diagrams/diagram';
import { refusalsOf } from '../../machines/diagrams/journey-diagrams';
import {
  FLOW_FAILURE_REASONS,
  loginFlowMachine,
  NAMED_REFUSALS,
  RESUME_REFUSALS,
  type FlowFailureReason,
} from '../../machines/login-flow.machine';
import { catalogue, type Reason } from '../../src/core/errors';

/*
 * The login machine's refusal reasons (machines/login-flow/refusals.ts) against the two things
 * they must agree with: the error catalogue, which machines/ may not import, and the machine
 * itself, whose edges into `refused` say what it refuses with.
 */

const refusedEdges = edgesOf(loginFlowMachine).filter((edge) => edge.target.key === 'refused');
const named = (edge: (typeof refusedEdges)[number]) =>
  edge.actions.flatMap((action) =>
    (action as { type?: string }).type === 'refuse' ? [(action as { params: { reason: string } }).params.reason] : [],
  );

describe('the login machine refusal reasons', () => {
  it('are reasons of the error catalogue (in type and in value)', () => {
    const subset: FlowFailureReason extends Reason ? true : false = true;
    expect(subset).toBe(true);
    expect(FLOW_FAILURE_REASONS.filter((reason) => !(reason in catalogue))).toEqual([]);
  });

  it('are each made by the machine: on an edge into refused, or by a request that resumes nowhere', () => {
    const made = new Set<string>([
      ...refusedEdges.flatMap((edge) => refusalsOf(edge).map((r) => r.reason)),
      ...RESUME_REFUSALS,
    ]);
    expect([...made].sort()).toEqual([...FLOW_FAILURE_REASONS].sort());
  });

  it('lists as named refusals exactly the reasons a state names', () => {
    const used = new Set(refusedEdges.flatMap(named));
    expect([...used].sort()).toEqual([...NAMED_REFUSALS].sort());
  });
});
