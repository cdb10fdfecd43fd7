import { getSimplePaths } from '@xstate/graph';
import { fromPromise, type AnyMachineSnapshot, type EventObject } from 'xstate';
import type { EffectName, FlowClaims } from '../../machines/effects';
import { loginFlowMachine, type Entry, type LoginFlowContext, type LoginFlowEvent, type LoginFlowInput } from '../../machines/login-flow.machine';
import { ENTRY_EVENT } from '../../machines/requests';
import { runStep } from '../../machines/run-step';
import { SETTLED, type StepId } from '../../machines/steps';
import { NEW_PHONE, PHONE, SENT } from './login-flow.fakes';

/*
 * Path coverage: @xstate/graph walks the machine from every way a request can resume it, with
 * each user event a frontend may send and every outcome each effect may report (effect
 * completions are the `xstate.done.actor.*` events the walk chooses). Every path that ends a
 * request is then run for real through runStep, with fake effects answering what the path
 * chose, and must end in the same state, on a step (or refusal) SPEC.md allows that action.
 */

const ME = { uid: 'uid-me', email: 'me@example.com' };

/** SPEC.md's next_step table: the steps (and refusal reasons) each action may answer. */
const allowed: Record<Entry, { steps: StepId[]; reasons: string[] }> = {
  login: { steps: [14, 33, 60], reasons: ['invalid_request'] },
  verifyOtp: { steps: [90, 24, 25, 37, 61], reasons: ['invalid', 'expired', 'too_many_attempts', 'phone_taken', 'invalid_proof', 'proof_required', 'invalid_request'] },
  register: { steps: [23, 90], reasons: ['phone_taken', 'invalid_proof', 'proof_required', 'invalid_request'] },
  addPhone: { steps: [62], reasons: ['phone_taken', 'invalid_proof', 'proof_required', 'invalid_request'] },
  updateProfile: { steps: [90], reasons: ['phone_taken', 'phone_not_verified', 'invalid_proof', 'proof_required', 'invalid_request'] },
};

const proof = (kind: string, step: number, flow: string, ids: Partial<Record<'uid' | 'email' | 'phone', string>>): FlowClaims => ({ kind, step, flow, ...ids });

/** Every way a request can resume the journey. */
const inputs: Array<[string, LoginFlowInput]> = [
  ['FeLogin', { entry: 'login' }],
  ['FeVerifyOtp flow phone', { entry: 'verifyOtp', flow: 'phone' }],
  ['FeVerifyOtp flow email', { entry: 'verifyOtp', flow: 'email' }],
  ['FeVerifyOtp phone_register, pending proof', { entry: 'verifyOtp', flow: 'phone_register', claims: proof('pending', 23, 'phone_register', { phone: PHONE, email: ME.email }) }],
  ['FeVerifyOtp email_register, pending proof', { entry: 'verifyOtp', flow: 'email_register', claims: proof('pending', 23, 'email_register', { email: ME.email }) }],
  ['FeVerifyOtp email_add_phone, pending proof', { entry: 'verifyOtp', flow: 'email_add_phone', claims: proof('pending', 62, 'email_add_phone', { ...ME, phone: NEW_PHONE }) }],
  ['FeVerifyOtp email_register_phone, trusted', { entry: 'verifyOtp', flow: 'email_register_phone', trusted: true }],
  ['FeVerifyOtp phone_register, no proof', { entry: 'verifyOtp', flow: 'phone_register' }],
  ['FeRegister email_otp, phone proof', { entry: 'register', phase: 'email_otp', claims: proof('phone', 24, 'phone_register', { phone: PHONE }) }],
  ['FeRegister email_otp, no proof', { entry: 'register', phase: 'email_otp' }],
  ['FeRegister register, proof of 25', { entry: 'register', phase: 'register', claims: proof('register', 25, 'phone_register', { phone: PHONE, email: ME.email }) }],
  ['FeRegister register, proof of 37', { entry: 'register', phase: 'register', claims: proof('register', 37, 'email_register', { email: ME.email }) }],
  ['FeRegister register, proof of another kind', { entry: 'register', phase: 'register', claims: proof('pending', 25, 'phone_register', { email: ME.email }) }],
  ['FeAddPhone, proof of 61', { entry: 'addPhone', flow: 'email_add_phone', claims: proof('verified', 61, 'email_add_phone', ME) }],
  ['FeAddPhone, proof of 90', { entry: 'addPhone', flow: 'email_register_phone', claims: proof('verified', 90, 'email_register_phone', ME) }],
  ['FeAddPhone, trusted', { entry: 'addPhone', flow: 'email_add_phone', trusted: true }],
  ['FeUpdateProfile, proof of 90', { entry: 'updateProfile', claims: proof('verified', 90, 'email_add_phone', { ...ME, phone: NEW_PHONE }) }],
  ['FeUpdateProfile, trusted', { entry: 'updateProfile', trusted: true }],
];

/** The requests a frontend may send, well-formed or not, bound to the proof's user or to another. */
const userEvents: LoginFlowEvent[] = [
  { type: 'LOGIN', identifier: PHONE },
  { type: 'LOGIN', identifier: ME.email },
  { type: 'LOGIN', identifier: ME.email, method: 'password' },
  { type: 'LOGIN', identifier: 'nobody' },
  { type: 'VERIFY_OTP', otp_code: '123456', phone: PHONE, email: ME.email },
  { type: 'VERIFY_OTP', otp_code: '123456', phone: NEW_PHONE, uid: ME.uid },
  { type: 'VERIFY_OTP', otp_code: '123456', email: 'other@example.com' },
  { type: 'VERIFY_OTP', otp_code: '' },
  { type: 'REGISTER', email: ME.email, phone: PHONE, first_name: 'Me', city: 'Roma' },
  { type: 'REGISTER', email: 'other@example.com' },
  { type: 'ADD_PHONE', phone: NEW_PHONE, uid: ME.uid },
  { type: 'ADD_PHONE', phone: NEW_PHONE, uid: 'uid-other' },
  { type: 'UPDATE_PROFILE', uid: ME.uid, last_name: 'Rossi', otp_phone: NEW_PHONE },
  { type: 'UPDATE_PROFILE', uid: ME.uid, city: 'Roma' },
  { type: 'UPDATE_PROFILE', uid: 'uid-other' },
];

/** What each effect may report. */
const outcomes: Record<EffectName, unknown[]> = {
  sendOtp: [SENT],
  verifyOtp: ['ok', 'invalid', 'expired', 'too_many_attempts'],
  searchUserByPhone: [{ found: false }, { found: true, ...ME, phone: NEW_PHONE }, { found: true, uid: 'uid-other', email: 'other@example.com', phone: PHONE }],
  lookupUserByEmail: [{ found: false }, { found: true, ...ME, phone: PHONE }, { found: true, ...ME }],
  registerUser: [{ uid: 'uid-new' }],
  confirmDoi: [{}],
  updateProfile: [{ outcome: 'saved' }, { outcome: 'phone_taken' }],
  issueToken: [{ access_token: 'token-1' }],
  ingestLogin: [undefined],
};

const DONE = 'xstate.done.actor.';
const ERROR = 'xstate.error.actor.';

function eventsFor(snapshot: AnyMachineSnapshot): EventObject[] {
  // One request = one event: user events only while the request has not arrived.
  const context = snapshot.context as LoginFlowContext;
  if (snapshot.hasTag(SETTLED)) return context.request === null ? userEvents.filter((e) => e.type === ENTRY_EVENT[context.entry]) : [];
  return Object.keys(snapshot.children).flatMap((id) => [
    ...(outcomes[id as EffectName] ?? []).map((output) => ({ type: `${DONE}${id}`, output })),
    // The ingest may fail; the login must not.
    ...(id === 'ingestLogin' ? [{ type: `${ERROR}${id}`, error: new Error('collector down') }] : []),
  ]);
}

interface RunnablePath {
  name: string;
  input: LoginFlowInput;
  event: LoginFlowEvent;
  effects: Array<{ id: string; output?: unknown; error?: unknown }>;
  endState: string;
}

function requestPaths(): RunnablePath[] {
  const runnable: RunnablePath[] = [];
  for (const [name, input] of inputs) {
    const paths = getSimplePaths(loginFlowMachine, { input, events: eventsFor as never });
    for (const path of paths) {
      const end = path.state as unknown as AnyMachineSnapshot;
      // A request ends where the machine settles after its event (or where resuming refused it).
      if (!end.hasTag(SETTLED) && end.status === 'active') continue;
      const events = path.steps.map((s) => s.event as EventObject & { output?: unknown; error?: unknown });
      const event = events.find((e) => !e.type.startsWith('xstate.')) as LoginFlowEvent | undefined;
      if (!event && end.value !== 'refused') continue;
      runnable.push({
        name,
        input,
        // Refused while resuming: the event is never sent.
        event: event ?? ({ type: ENTRY_EVENT[input.entry] } as LoginFlowEvent),
        effects: events
          .filter((e) => e.type.startsWith(DONE) || e.type.startsWith(ERROR))
          .map((e) => (e.type.startsWith(DONE) ? { id: e.type.slice(DONE.length), output: e.output } : { id: e.type.slice(ERROR.length), error: e.error })),
        endState: String(end.value),
      });
    }
  }
  return runnable;
}

/** Fake effects answering, in order, what the path chose. */
function scripted(effects: RunnablePath['effects']) {
  const queues = new Map<string, RunnablePath['effects']>();
  for (const effect of effects) queues.set(effect.id, [...(queues.get(effect.id) ?? []), effect]);
  const actors = Object.fromEntries(
    (Object.keys(outcomes) as EffectName[]).map((id) => [
      id,
      fromPromise(async () => {
        const next = queues.get(id)?.shift();
        if (!next) throw new Error(`path did not expect ${id}`);
        if (next.error) throw next.error;
        return next.output;
      }),
    ]),
  );
  return loginFlowMachine.provide({ actors: actors as never });
}

describe('every path of the login journey', () => {
  const paths = requestPaths();

  it('has paths from every way a request resumes', () => {
    console.log(`login journey: ${paths.length} request paths generated by @xstate/graph from ${inputs.length} resume points`);
    expect(new Set(paths.map((p) => p.name))).toEqual(new Set(inputs.map(([name]) => name)));
    expect(paths.length).toBeGreaterThan(100);
  });

  it('reaches every state of the machine', () => {
    const reached = new Set(paths.map((p) => p.endState));
    const settled = Object.values(loginFlowMachine.root.states).filter((s) => s.tags.includes(SETTLED)).map((s) => s.key);
    for (const state of settled.filter((s) => s !== 'enteringIdentifier' && s !== 'enteringRegistrationEmail')) expect(reached).toContain(state);
  });

  it('runs each path against fake effects to the state it predicts, on a step SPEC.md allows', async () => {
    let ran = 0;
    for (const path of paths) {
      const result = await runStep(scripted(path.effects), { input: path.input, event: path.event, timeoutMs: 1000 });
      const { output } = result;
      const where = `${path.name}: ${path.event.type} -> ${path.endState}`;
      expect({ where, state: output.state }).toEqual({ where, state: path.endState });
      const rules = allowed[path.input.entry];
      if (output.ok) expect({ where, step: rules.steps.includes(output.nextStep!) }).toEqual({ where, step: true });
      else expect({ where, reason: rules.reasons.includes(output.failure!.reason) }).toEqual({ where, reason: true });
      ran += 1;
    }
    expect(ran).toBe(paths.length);
  });

  it('never answers a token without issuing it and ingesting it in the same request', async () => {
    for (const path of paths.filter((p) => p.endState === 'loggedIn' && p.effects.some((e) => e.id === 'issueToken'))) {
      const result = await runStep(scripted(path.effects), { input: path.input, event: path.event, timeoutMs: 1000 });
      expect(result.output.accessToken).toBe('token-1');
      expect(result.calls.slice(-2)).toEqual(['issueToken', 'ingestLogin']);
    }
  });
});
