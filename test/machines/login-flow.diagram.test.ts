import { renderMermaid, stepTable } from '../../machines/diagrams/diagram';
import { loginFlowMachine } from '../../machines/login-flow.machine';
import { STEP_INFO } from '../../machines/steps';

// The diagrams come from walking the machine: what they show is what runs.

describe('login flow diagram', () => {
  const diagram = renderMermaid(loginFlowMachine);
  const rows = stepTable(loginFlowMachine);

  it('puts every step the contract numbers on a state of the machine', () => {
    const spec = [13, 14, 32, 33, 60, 90, 24, '24b', 25, 34, 30, 31, 37, 65, 61, 23, 36, 40, 42, 62];
    expect(rows.map((r) => r.step).sort()).toEqual([...spec].sort());
  });

  it('labels states with their step and transitions with their event and guard', () => {
    expect(diagram).toMatch(/^stateDiagram-v2\n/);
    expect(diagram).toContain('state "62 awaitingNewPhoneCode" as awaitingNewPhoneCode');
    expect(diagram).toContain('verifyingPhoneCode --> findingUserByPhone : verifyOtp done [codeAccepted]');
    expect(diagram).toContain(
      'awaitingPhoneCode --> verifyingPhoneCode : VERIFY_OTP [requestAccepted(needs=phone/code takes=phone)]',
    );
    expect(diagram).toContain('ingestingLogin --> loggedIn : ingestLogin failed');
  });

  it('cuts a view to the states it is given', () => {
    const view = renderMermaid(loginFlowMachine, { only: new Set(['loggedIn', 'reviewingProfile']) });
    expect(view).toContain('loggedIn --> reviewingProfile : UPDATE_PROFILE');
    expect(view).not.toContain('awaitingPhoneCode');
  });

  it('lists under each step the actions whose request reaches it', () => {
    const reached = Object.fromEntries(rows.map((r) => [r.step, r.reachedBy]));
    expect(reached[14]).toEqual(['FeLogin']);
    expect(reached[62]).toEqual(['FeAddPhone']);
    expect(reached[23]).toEqual(['FeRegister']);
    expect(reached[90]).toEqual(['FeVerifyOtp', 'FeRegister', 'FeUpdateProfile']);
  });

  it('shows the screens the contract names on the steps that answer them', () => {
    expect(STEP_INFO[62]).toMatchObject({ screen: 'otp_phone', wire: true });
    expect(STEP_INFO[90]).toMatchObject({ screen: 'success', wire: true });
    expect(rows.find((r) => r.step === 62)).toMatchObject({
      screen: 'otp_phone',
      settles: true,
      proof: 'pending_proof (pending)',
    });
  });
});
