import type { StateValue } from 'xstate';
import { ENTRY_ACTION, type FeAction, type Phase, type ProofKind } from './actions';
import {
  initialContext,
  loginFlowMachine,
  proofIdentifiers,
  type FlowFailure,
  type LoginFlowContext,
  type LoginFlowInput,
  type LoginFlowMachine,
  type LoginFlowState,
} from './login-flow.machine';
import type { ResumeRefusal } from './login-flow/refusals';
import { STEP, type Flow, type StepId } from './steps';

/*
 * Where a request resumes the login journey. No session is kept: a request names where the
 * user is (its action, `flow`, FeRegister's `phase`, and a signed proof), and the machine is
 * started directly in the state this table gives for it (`machine.resolveState`), then sent the
 * request's one event. The rows are tried in order and the first that matches wins: within an
 * action, rows that need a proof come first, then rows that need none, then a trusted caller's.
 * A request that matches no row is refused: `invalid_proof` when it presented a proof (the proof
 * resumes nothing here), `proof_required` otherwise.
 */

export interface ResumePoint {
  action: FeAction;
  /** The request's `flow` (or, when it sends none, its proof's) is one of these. */
  flows?: readonly Flow[];
  /** FeRegister's `phase` is one of these; a request without a phase matches any. */
  phases?: readonly Phase[];
  /**
   * The proof presented is of this kind and was handed out at this step. The request then acts
   * only on the identifiers the proof binds (uid, email, phone). Rows without `proof` ignore a
   * proof the request may carry.
   */
  proof?: { kind: ProofKind; step: StepId | typeof NO_STEP };
  /** Only for a trusted caller (x-internal-key, or `security.guard_primitives` off), who carries no proof. */
  trusted?: true;
  /** The state the request resumes: a state that waits for the user (tag `settled`). */
  state: LoginFlowState;
}

/** A proof handed out outside the journey: the identity primitives' `verified` proof of a login names no step. */
export const NO_STEP = 'none';

export const RESUME_POINTS: readonly ResumePoint[] = [
  { action: 'FeLogin', state: 'enteringIdentifier' },

  {
    action: 'FeVerifyOtp',
    flows: ['phone_register', 'email_register'],
    proof: { kind: 'pending', step: STEP.enterRegistrationEmailCode },
    state: 'awaitingRegistrationEmailCode',
  },
  {
    action: 'FeVerifyOtp',
    flows: ['email_add_phone', 'email_register_phone'],
    proof: { kind: 'pending', step: STEP.enterNewPhoneCode },
    state: 'awaitingNewPhoneCode',
  },
  // Step 65 after a claim: the code sent to the phone on file, or "not my phone".
  {
    action: 'FeVerifyOtp',
    flows: ['email_with_phone', 'email_phone_declined'],
    proof: { kind: 'pending', step: STEP.knownUserWithPhone },
    state: 'awaitingPhoneOnFileCode',
  },
  { action: 'FeVerifyOtp', flows: ['phone'], state: 'awaitingPhoneCode' },
  { action: 'FeVerifyOtp', flows: ['email', 'email_with_phone', 'email_register'], state: 'awaitingEmailCode' },
  { action: 'FeVerifyOtp', flows: ['phone_register'], trusted: true, state: 'awaitingRegistrationEmailCode' },
  {
    action: 'FeVerifyOtp',
    flows: ['email_add_phone', 'email_register_phone'],
    trusted: true,
    state: 'awaitingNewPhoneCode',
  },

  {
    action: 'FeRegister',
    phases: ['email_otp'],
    proof: { kind: 'phone', step: STEP.enterRegistrationEmail },
    state: 'askingRegistrationEmail',
  },
  {
    action: 'FeRegister',
    phases: ['register'],
    proof: { kind: 'register', step: STEP.registrationForm },
    state: 'fillingPhoneRegistrationForm',
  },
  {
    action: 'FeRegister',
    phases: ['register'],
    proof: { kind: 'register', step: STEP.newUserForm },
    state: 'fillingEmailRegistrationForm',
  },
  // Without a proof an email registration starts here (no phone verified first).
  { action: 'FeRegister', phases: ['email_otp'], state: 'enteringRegistrationEmail' },
  { action: 'FeRegister', phases: ['register'], trusted: true, state: 'fillingEmailRegistrationForm' },

  { action: 'FeAddPhone', proof: { kind: 'verified', step: STEP.addPhone }, state: 'askingPhone' },
  { action: 'FeAddPhone', proof: { kind: 'verified', step: STEP.loggedIn }, state: 'loggedIn' },
  { action: 'FeAddPhone', trusted: true, state: 'askingPhone' },

  { action: 'FeUpdateProfile', proof: { kind: 'verified', step: STEP.loggedIn }, state: 'loggedIn' },
  { action: 'FeUpdateProfile', trusted: true, state: 'loggedIn' },

  // Outside the contract: a passkey logs in from the login screen (its passkey_proof is the effect's to check).
  { action: 'PasskeyLogin', state: 'enteringIdentifier' },
  // Enrolling a passkey after a login: both requests with the login proof of 90 (the options' challenge is
  // the effects' to check), or the one the identity primitives hand out for a login, which names no step
  // (docs/passkeys.md). No trusted row: an enrolment is always the logged-in person's own.
  { action: 'PasskeyEnrolOptions', proof: { kind: 'verified', step: STEP.loggedIn }, state: 'loggedIn' },
  { action: 'PasskeyEnrolOptions', proof: { kind: 'verified', step: NO_STEP }, state: 'loggedIn' },
  { action: 'PasskeyEnrol', proof: { kind: 'verified', step: STEP.loggedIn }, state: 'passkeyOffered' },
  { action: 'PasskeyEnrol', proof: { kind: 'verified', step: NO_STEP }, state: 'passkeyOffered' },
];

function matches(point: ResumePoint, context: LoginFlowContext): boolean {
  if (point.action !== ENTRY_ACTION[context.entry]) return false;
  if (point.flows && !(context.flow !== null && point.flows.includes(context.flow))) return false;
  // A missing phase is read from the proof's step.
  if (point.phases && context.phase !== null && !point.phases.includes(context.phase)) return false;
  if (point.trusted && !context.trusted) return false;
  if (!point.proof) return true;
  const claims = context.claims;
  if (claims === null || claims.kind !== point.proof.kind) return false;
  return point.proof.step === NO_STEP ? claims.step === undefined : String(claims.step) === String(point.proof.step);
}

/** The row a request resumes at, or undefined when it resumes nothing (it is refused). */
export function resumePointFor(input: LoginFlowInput): ResumePoint | undefined {
  const context = initialContext(input);
  return RESUME_POINTS.find((point) => matches(point, context));
}

/** Why a request that matches no row is refused. */
const unresumable = (input: LoginFlowInput): FlowFailure & { reason: ResumeRefusal } => ({
  reason: input.claims ? 'invalid_proof' : 'proof_required',
});

/** The path of every state, by its key (keys are unique across the machine). */
function statePaths(machine: LoginFlowMachine): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  const walk = (states: Record<string, { path: string[]; states: Record<string, unknown> }>) => {
    for (const [key, node] of Object.entries(states)) {
      if (paths.has(key)) throw new Error(`login flow: state key "${key}" is used twice`);
      paths.set(key, node.path);
      walk(node.states as typeof states);
    }
  };
  walk(machine.root.states as never);
  return paths;
}
const PATHS = statePaths(loginFlowMachine);

/** The state value of a state named by its key: `{ phoneLogin: 'awaitingPhoneCode' }`. */
function stateValueOf(state: LoginFlowState): StateValue {
  const path = PATHS.get(state);
  if (!path) throw new Error(`login flow: no state "${state}"`);
  return nest(path);
}
const nest = (path: string[]): StateValue => (path.length === 1 ? path[0]! : { [path[0]!]: nest(path.slice(1)) });

/**
 * The snapshot a request starts from: the state of its resume point, with the identifiers of
 * the proof that resumed it, or `refused` when it resumes nothing. runStep steps the machine
 * from it; no state is entered on the way, so nothing runs before the request's event.
 */
export function resumeSnapshot(machine: LoginFlowMachine, input: LoginFlowInput) {
  const context = initialContext(input);
  const point = RESUME_POINTS.find((row) => matches(row, context));
  if (!point)
    return machine.resolveState({
      value: stateValueOf('refused'),
      context: { ...context, failure: unresumable(input) },
    });
  return machine.resolveState({
    value: stateValueOf(point.state),
    context: point.proof ? { ...context, ...proofIdentifiers(context.claims) } : context,
  });
}

/** What a row asks of the request, in words: `flow phone_register / email_register, pending proof of 23`. */
export function resumeConditions(point: ResumePoint): string[] {
  return [
    point.flows && `flow ${point.flows.join(' / ')}`,
    point.phases && `phase ${point.phases.join(' / ')}`,
    point.proof &&
      (point.proof.step === NO_STEP
        ? `${point.proof.kind} proof of no step (identity primitives)`
        : `${point.proof.kind} proof of ${point.proof.step}`),
    point.trusted && 'trusted caller',
  ].filter((part): part is string => typeof part === 'string');
}

/** The label of a row's entry edge in the diagrams: `FeVerifyOtp (flow phone)`. */
function resumeLabel(point: ResumePoint): string {
  const conditions = resumeConditions(point);
  return conditions.length ? `${point.action} (${conditions.join(', ')})` : point.action;
}

/** The label of the entry every request that matches no row takes. */
const UNRESUMABLE_LABEL = 'any other request (invalid_proof with a proof, proof_required without)';

/** True when some request of this action matches no row (and so is refused before its event). */
const mayBeUnresumable = (action: FeAction): boolean =>
  !RESUME_POINTS.some((p) => p.action === action && !p.flows && !p.phases && !p.proof && !p.trusted);

/** The diagram's entry points: one per row (of one action, or all), then the refusal of every other request. */
export function resumeEntries(action?: FeAction): Array<{ target: LoginFlowState; label: string }> {
  const rows = RESUME_POINTS.filter((p) => !action || p.action === action).map((p) => ({
    target: p.state,
    label: resumeLabel(p),
  }));
  const refused = !action || mayBeUnresumable(action) ? [{ target: 'refused' as const, label: UNRESUMABLE_LABEL }] : [];
  return [...rows, ...refused];
}
