import { getSimplePaths } from '@xstate/graph';
import { fromPromise, type AnyMachineSnapshot, type EventObject } from 'xstate';
import { ACTIONS, ENTRY_EVENT } from '../../machines/actions';
import { stateNodes } from '../../machines/diagrams/diagram';
import type { EffectName, FlowClaims } from '../../machines/effects';
import {
  loginFlowMachine,
  type Entry,
  type LoginFlowContext,
  type LoginFlowEvent,
  type LoginFlowInput,
} from '../../machines/login-flow.machine';
import { NO_STEP, RESUME_POINTS, resumePointFor, resumeSnapshot, type ResumePoint } from '../../machines/resume';
import { runStep, stateKeyOf } from '../../machines/run-step';
import { SETTLED, STEP, type StepId } from '../../machines/steps';
import { NEW_PHONE, PHONE, SENT } from './login-flow.fakes';

/*
 * Path coverage: @xstate/graph walks the machine from every row of the resume table (the state
 * a request starts in), with each user event a frontend may send and every outcome each effect
 * may report (effect completions are the `xstate.done.actor.*` events the walk chooses). Every
 * path that ends a request is then run for real through runStep, with fake effects answering
 * what the path chose, and must end in the same state, on a step (or refusal) the contract allows
 * that action.
 */

const ME = { uid: 'uid-me', email: 'me@example.com' };

/** The contract's next_step table (docs/contract.md#steps): the steps (and refusal reasons) each action may answer. */
const allowed: Record<Entry, { steps: StepId[]; reasons: string[] }> = {
  login: { steps: [14, 33, 60], reasons: ['invalid_request'] },
  verifyOtp: {
    steps: [90, 24, 25, 37, 61, 65],
    reasons: [
      'invalid',
      'expired',
      'too_many_attempts',
      'phone_taken',
      'phone_on_hold',
      'invalid_proof',
      'proof_required',
      'invalid_request',
    ],
  },
  register: { steps: [23, 90], reasons: ['phone_taken', 'invalid_proof', 'proof_required', 'invalid_request'] },
  addPhone: { steps: [62], reasons: ['phone_taken', 'invalid_proof', 'proof_required', 'invalid_request'] },
  updateProfile: {
    steps: [90],
    reasons: ['phone_taken', 'phone_not_verified', 'invalid_proof', 'proof_required', 'invalid_request'],
  },
  // Outside the contract (docs/passkeys.md): a passkey logs in or the effect's own refusal is thrown.
  passkeyLogin: { steps: [90], reasons: [] },
  // After 90 (docs/passkeys.md): the options at 102, the passkey kept at 103; a proof of another step resumes nothing.
  passkeyEnrolOptions: { steps: [102], reasons: ['invalid_proof', 'proof_required'] },
  passkeyEnrol: { steps: [103], reasons: ['invalid_proof', 'proof_required'] },
};

const proof = (
  kind: string,
  step: StepId | typeof NO_STEP,
  flow: string | undefined,
  ids: Partial<Record<'uid' | 'email' | 'phone', string>>,
): FlowClaims => ({
  kind,
  // The identity primitives' proof of a login names no step.
  ...(step === NO_STEP ? {} : { step }),
  ...(flow ? { flow } : {}),
  ...ids,
});

/** What a proof handed out at each step binds (the `carries` of the state that hands it out), for the proof's user. */
const PROOF_IDS: Partial<Record<StepId, Partial<Record<'uid' | 'email' | 'phone', string>>>> = {
  [STEP.enterRegistrationEmail]: { phone: PHONE },
  [STEP.enterRegistrationEmailCode]: { phone: PHONE, email: ME.email },
  [STEP.registrationForm]: { phone: PHONE, email: ME.email },
  [STEP.newUserForm]: { email: ME.email },
  [STEP.addPhone]: ME,
  [STEP.enterNewPhoneCode]: { ...ME, phone: NEW_PHONE },
  [STEP.loggedIn]: { ...ME, phone: NEW_PHONE },
  [STEP.knownUserWithPhone]: { ...ME, phone: PHONE },
};

/** One request per row of the resume table and per flow the row names: a request that resumes there. */
function requestsAt(point: ResumePoint): Array<[string, LoginFlowInput]> {
  const flows = point.flows ?? [undefined];
  return flows.map((flow) => {
    const conditions = [
      flow && `flow ${flow}`,
      point.phases && `phase ${point.phases[0]}`,
      point.proof ? `${point.proof.kind} proof of ${point.proof.step}` : point.trusted ? 'trusted' : 'no proof',
    ];
    const input: LoginFlowInput = {
      entry: ACTIONS[point.action].entry,
      ...(flow ? { flow } : {}),
      ...(point.phases ? { phase: point.phases[0] } : {}),
      ...(point.proof
        ? {
            claims: proof(
              point.proof.kind,
              point.proof.step,
              flow,
              (point.proof.step === NO_STEP ? ME : PROOF_IDS[point.proof.step]) ?? {},
            ),
          }
        : {}),
      ...(point.trusted ? { trusted: true } : {}),
    };
    return [`${point.action} ${conditions.filter(Boolean).join(', ')} -> ${point.state}`, input];
  });
}

/** Every way a request can start: each row of the resume table, and the two refusals of a request that matches none. */
const inputs: Array<[string, LoginFlowInput]> = [
  ...RESUME_POINTS.flatMap(requestsAt),
  ['FeVerifyOtp phone_register, no proof -> refused', { entry: 'verifyOtp', flow: 'phone_register' }],
  [
    'FeRegister register, proof of another kind -> refused',
    {
      entry: 'register',
      phase: 'register',
      claims: proof('pending', STEP.registrationForm, 'phone_register', { email: ME.email }),
    },
  ],
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
  { type: 'VERIFY_OTP', uid: ME.uid },
  { type: 'VERIFY_OTP', uid: 'uid-other' },
  { type: 'REGISTER', email: ME.email, phone: PHONE, first_name: 'Me', city: 'Roma' },
  { type: 'REGISTER', email: 'other@example.com' },
  { type: 'ADD_PHONE', phone: NEW_PHONE, uid: ME.uid },
  { type: 'ADD_PHONE', phone: NEW_PHONE, uid: 'uid-other' },
  { type: 'UPDATE_PROFILE', uid: ME.uid, last_name: 'Rossi', otp_phone: NEW_PHONE },
  { type: 'UPDATE_PROFILE', uid: ME.uid, city: 'Roma' },
  { type: 'UPDATE_PROFILE', uid: 'uid-other' },
  { type: 'PASSKEY_LOGIN', passkey_proof: 'pk-proof', credential: { id: 'cred-me' } },
  { type: 'PASSKEY_ENROL_OPTIONS' },
  { type: 'PASSKEY_ENROL', passkey_proof: 'pk-enrol-proof', credential: { id: 'cred-new' }, name: 'Passkey' },
];

/** What each effect may report. */
const outcomes: Record<EffectName, unknown[]> = {
  sendOtp: [SENT],
  verifyOtp: ['ok', 'invalid', 'expired', 'too_many_attempts'],
  searchUserByPhone: [
    { found: false },
    { found: false, onHold: true },
    { found: true, ...ME, phone: NEW_PHONE },
    { found: true, uid: 'uid-other', email: 'other@example.com', phone: PHONE },
  ],
  lookupUserByEmail: [
    { found: false },
    { found: true, ...ME, phone: PHONE },
    { found: true, ...ME },
    { found: true, ...ME, phone: PHONE, emailUnconfirmed: true },
    { found: true, ...ME, emailUnconfirmed: true },
    { found: true, ...ME, phone: PHONE, phoneHeld: true },
  ],
  claimAccount: [{ heldPhone: PHONE }, { heldPhone: null }],
  releasePhone: [undefined],
  registerUser: [{ uid: 'uid-new' }],
  confirmDoi: [{}],
  updateProfile: [{ outcome: 'saved' }, { outcome: 'phone_taken' }],
  issueToken: [{ access_token: 'token-1' }],
  ingestLogin: [undefined],
  verifyPasskey: [{ uid: ME.uid }],
  passkeyEnrolOptions: [{ options: { challenge: 'c' }, passkey_proof: 'pk-enrol-proof' }],
  enrolPasskey: [{ passkey: { id: 'cred-new', name: 'Passkey' } }],
};

const DONE = 'xstate.done.actor.';
const ERROR = 'xstate.error.actor.';

function eventsFor(snapshot: AnyMachineSnapshot): EventObject[] {
  // One request = one event: user events only while the request has not arrived.
  const context = snapshot.context as LoginFlowContext;
  if (snapshot.hasTag(SETTLED))
    return context.request === null ? userEvents.filter((e) => e.type === ENTRY_EVENT[context.entry]) : [];
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
    const paths = getSimplePaths(loginFlowMachine, {
      fromState: resumeSnapshot(loginFlowMachine, input),
      events: eventsFor as never,
    });
    for (const path of paths) {
      const end = path.state as unknown as AnyMachineSnapshot;
      // A request ends where the machine settles after its event (or where resuming refused it).
      if (!end.hasTag(SETTLED) && end.status === 'active') continue;
      const events = path.steps.map((s) => s.event as EventObject & { output?: unknown; error?: unknown });
      const event = events.find((e) => !e.type.startsWith('xstate.')) as LoginFlowEvent | undefined;
      if (!event && stateKeyOf(end) !== 'refused') continue;
      runnable.push({
        name,
        input,
        // Refused while resuming: the event is never sent.
        event: event ?? ({ type: ENTRY_EVENT[input.entry] } as LoginFlowEvent),
        effects: events
          .filter((e) => e.type.startsWith(DONE) || e.type.startsWith(ERROR))
          .map((e) =>
            e.type.startsWith(DONE)
              ? { id: e.type.slice(DONE.length), output: e.output }
              : { id: e.type.slice(ERROR.length), error: e.error },
          ),
        endState: stateKeyOf(end),
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

  it('starts one request from every row of the resume table, and each resumes at its own row', () => {
    expect(RESUME_POINTS.length).toBeGreaterThan(0);
    expect(inputs.length).toBeGreaterThan(RESUME_POINTS.length);
    for (const point of RESUME_POINTS) {
      const rows = requestsAt(point);
      expect(rows.length).toBeGreaterThan(0);
      // No row is shadowed by an earlier one: its own request resumes there.
      for (const [name, input] of rows) expect({ name, row: resumePointFor(input) }).toEqual({ name, row: point });
    }
    for (const [name, input] of inputs.slice(-2))
      expect({ name, row: resumePointFor(input) }).toEqual({ name, row: undefined });
  });

  it('has paths from every way a request resumes', () => {
    console.log(
      `login journey: ${paths.length} request paths generated by @xstate/graph from ${inputs.length} requests (${RESUME_POINTS.length} resume points)`,
    );
    expect(paths.length).toBeGreaterThan(100);
    expect(new Set(paths.map((p) => p.name))).toEqual(new Set(inputs.map(([name]) => name)));
  });

  it('reaches every state of the machine', () => {
    const reached = new Set(paths.map((p) => p.endState));
    const settled = stateNodes(loginFlowMachine.root)
      .filter((s) => s.tags.includes(SETTLED))
      .map((s) => s.key);
    expect(settled.length).toBeGreaterThan(0);
    for (const state of settled.filter((s) => s !== 'enteringIdentifier' && s !== 'enteringRegistrationEmail'))
      expect(reached).toContain(state);
  });

  it('runs each path against fake effects to the state it predicts, on a step the contract allows', async () => {
    expect(paths.length).toBeGreaterThan(0);
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
    const issuing = paths.filter((p) => p.endState === 'loggedIn' && p.effects.some((e) => e.id === 'issueToken'));
    expect(issuing.length).toBeGreaterThan(0);
    for (const path of issuing) {
      const result = await runStep(scripted(path.effects), { input: path.input, event: path.event, timeoutMs: 1000 });
      expect(result.output.accessToken).toBe('token-1');
      expect(result.calls.slice(-2)).toEqual(['issueToken', 'ingestLogin']);
    }
  });
});
