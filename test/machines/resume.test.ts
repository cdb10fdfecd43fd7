import {
  ACTIONS,
  ACTION_ENTRY,
  ENTRY_ACTION,
  ENTRY_EVENT,
  EVENT_ACTION,
  FE_ACTIONS,
  proofFieldFor,
} from '../../machines/actions';
import { renderMermaid, stateNodes } from '../../machines/diagrams/diagram';
import { loginFlowMachine } from '../../machines/login-flow.machine';
import { RESUME_POINTS, resumeEntries, resumePointFor, resumeSnapshot } from '../../machines/resume';
import { stateKeyOf } from '../../machines/run-step';
import { SETTLED, STEP } from '../../machines/steps';
import { PHONE } from './login-flow.fakes';

// The resume table: where a request starts the machine, and the one table that names each action.

const nodes = stateNodes(loginFlowMachine.root);
const nodeOf = (key: string) => nodes.find((n) => n.key === key);

describe('the resume table', () => {
  it('has rows, each resuming a state that waits for the user and takes the action’s event', () => {
    expect(RESUME_POINTS.length).toBeGreaterThan(0);
    for (const point of RESUME_POINTS) {
      const node = nodeOf(point.state);
      const where = `${point.action} -> ${point.state}`;
      expect({ where, settled: node?.tags.includes(SETTLED) }).toEqual({ where, settled: true });
      expect({ where, takes: node?.transitions.has(ACTIONS[point.action].event) }).toEqual({ where, takes: true });
    }
  });

  it('tries, within an action, rows that need a proof first, then rows that need none, then a trusted caller’s', () => {
    const rank = (p: (typeof RESUME_POINTS)[number]) => (p.proof ? 0 : p.trusted ? 2 : 1);
    for (const action of FE_ACTIONS) {
      const ranks = RESUME_POINTS.filter((p) => p.action === action).map(rank);
      expect({ action, ranks }).toEqual({ action, ranks: [...ranks].sort() });
    }
  });

  it('starts the machine directly in the row’s state, with the identifiers of the proof that resumed it', () => {
    const input = {
      entry: 'verifyOtp' as const,
      flow: 'phone_register' as const,
      claims: { kind: 'pending', step: STEP.enterRegistrationEmailCode, email: 'New@Example.com', phone: PHONE },
    };
    const snapshot = resumeSnapshot(loginFlowMachine, input);
    expect(snapshot.value).toEqual({ registration: 'awaitingRegistrationEmailCode' });
    expect(snapshot.status).toBe('active');
    expect(snapshot.context).toMatchObject({ email: 'new@example.com', phone: PHONE, request: null });
  });

  it('ignores a proof a row does not ask for: nothing of it is adopted', () => {
    const stray = { kind: 'pending', step: STEP.enterNewPhoneCode, uid: 'uid-1', phone: '+393339876543' };
    const snapshot = resumeSnapshot(loginFlowMachine, { entry: 'verifyOtp', flow: 'phone', claims: stray });
    expect(stateKeyOf(snapshot)).toBe('awaitingPhoneCode');
    expect(snapshot.context.uid).toBeUndefined();
    expect(snapshot.context.phone).toBeUndefined();
  });

  it('refuses a request no row matches: invalid_proof with a proof, proof_required without', () => {
    const withProof = resumeSnapshot(loginFlowMachine, {
      entry: 'updateProfile',
      claims: { kind: 'verified', step: STEP.addPhone, uid: 'uid-1' },
    });
    const without = resumeSnapshot(loginFlowMachine, { entry: 'updateProfile' });
    expect([stateKeyOf(withProof), withProof.status, withProof.context.failure]).toEqual([
      'refused',
      'done',
      { reason: 'invalid_proof' },
    ]);
    expect([stateKeyOf(without), without.status, without.context.failure]).toEqual([
      'refused',
      'done',
      { reason: 'proof_required' },
    ]);
    expect(resumePointFor({ entry: 'updateProfile' })).toBeUndefined();
  });

  it('puts a trusted caller where a proof would have', () => {
    expect(resumePointFor({ entry: 'addPhone', trusted: true })?.state).toBe(
      resumePointFor({ entry: 'addPhone', claims: { kind: 'verified', step: STEP.addPhone } })?.state,
    );
    expect(resumePointFor({ entry: 'updateProfile', trusted: true })?.state).toBe('loggedIn');
  });

  it('is drawn as entry points, one edge from [*] per row, and the refusal of any other request', () => {
    const diagram = renderMermaid(loginFlowMachine, { entries: resumeEntries() });
    const entries = diagram.split('\n').filter((line) => line.startsWith('  [*] -->'));
    expect(entries).toHaveLength(RESUME_POINTS.length + 1);
    expect(diagram).toContain('[*] --> awaitingPhoneCode : FeVerifyOtp (flow phone)');
    expect(diagram).toContain(
      '[*] --> awaitingRegistrationEmailCode : FeVerifyOtp (flow phone_register / email_register, pending proof of 23)',
    );
    expect(diagram).toContain('[*] --> loggedIn : FeUpdateProfile (trusted caller)');
    expect(diagram).toContain(
      '[*] --> refused : any other request (invalid_proof with a proof, proof_required without)',
    );
    expect(diagram).not.toContain('restoring');
  });

  it('draws the journeys as compound states around their steps', () => {
    const diagram = renderMermaid(loginFlowMachine);
    expect(diagram).toContain('state "phoneLogin" as phoneLogin {\n    state "13 sendingSmsCode" as sendingSmsCode');
    for (const journey of ['phoneLogin', 'emailLogin', 'registration', 'addingPhone', 'profile'])
      expect(Object.keys(nodeOf(journey)?.states ?? {}).length).toBeGreaterThan(1);
  });

  it('names every state by a key used once', () => {
    const keys = nodes.map((n) => n.key);
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('the actions table', () => {
  it('names each action once: entry, event and proof field all read from ACTIONS', () => {
    expect(FE_ACTIONS).toEqual(['FeLogin', 'FeVerifyOtp', 'FeRegister', 'FeAddPhone', 'FeUpdateProfile']);
    for (const action of FE_ACTIONS) {
      const { entry, event } = ACTIONS[action];
      expect([ACTION_ENTRY[action], ENTRY_ACTION[entry], ENTRY_EVENT[entry], EVENT_ACTION[event]]).toEqual([
        entry,
        action,
        event,
        action,
      ]);
    }
  });

  it('reads the proof field from the action, and FeRegister’s from its phase', () => {
    expect(proofFieldFor('login', {})).toBeNull();
    expect(proofFieldFor('verifyOtp', {})).toBe('pending_proof');
    expect(proofFieldFor('register', { phase: 'email_otp' })).toBe('phone_proof');
    expect(proofFieldFor('register', { phase: 'register' })).toBe('register_proof');
    expect(proofFieldFor('register', { register_proof: 'x' })).toBe('register_proof');
    expect(proofFieldFor('register', {})).toBe('phone_proof');
    expect(proofFieldFor('addPhone', {})).toBe('proof');
    expect(proofFieldFor('updateProfile', {})).toBe('proof');
  });
});
