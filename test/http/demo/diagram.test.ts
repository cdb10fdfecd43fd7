import { edgesOf, loginFlowMachine, stateNodes } from '../../../machines';
import { demoDiagram } from '../../../src/http/demo/diagram';

/* The page's step diagram is the login machine itself, read through machines/diagram.ts. */

describe('demo diagram', () => {
  const diagram = demoDiagram();

  it('lists every state of the login machine, in definition order', () => {
    expect(diagram.states.map((s) => s.name)).toEqual(stateNodes(loginFlowMachine.root).map((n) => n.key));
  });

  it('carries every transition with the label docs/flows.md shows', () => {
    expect(diagram.edges).toHaveLength(edgesOf(loginFlowMachine).length);
    expect(diagram.edges).toContainEqual({ from: 'awaitingPhoneCode', to: 'verifyingPhoneCode', label: 'VERIFY_OTP [requestAccepted(needs=phone/code takes=phone)]' });
  });

  it('has a waiting state for every next_step the page shows', () => {
    for (const step of ['14', '23', '24', '25', '33', '37', '60', '61', '62', '90']) {
      expect({ step, states: diagram.states.filter((s) => s.kind === 'waits' && s.steps.includes(step)).length }).toEqual({ step, states: 1 });
    }
  });

  it('starts FeLogin and a proofless FeRegister where restoring routes them', () => {
    expect(diagram.start).toEqual({ login: 'enteringIdentifier', register: 'enteringRegistrationEmail' });
  });

  it('marks the refusal state failed and states crossed within a request passed', () => {
    const kind = (name: string) => diagram.states.find((s) => s.name === name)?.kind;
    expect([kind('refused'), kind('verifyingPhoneCode'), kind('awaitingPhoneCode')]).toEqual(['failed', 'passed', 'waits']);
  });
});
