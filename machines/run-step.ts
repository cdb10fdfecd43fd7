import { createActor, waitFor, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import type { NextProof, OtpSendMetadata } from './effects';
import { ENTRY_EVENT, PROOF_KIND } from './actions';
import type { FlowFailure, LoginFlowContext, LoginFlowEvent, LoginFlowInput, LoginFlowMachine, LoginFlowStateMeta } from './login-flow.machine';
import { resumeSnapshot } from './resume';
import { CODE_VERIFIED, FAILED, SETTLED, STEP, STEP_INFO, stepOfTag, type Flow, type StepId } from './steps';

/*
 * One request of the login journey: start the machine at the state the request resumes
 * (machines/resume.ts), send its one event, let the effects run until it settles, stop it, and say what to answer.
 * No HTTP here: the Fe* handlers shape the envelope from `output`.
 */

/** One line of the `debug` array: a step passed (`step_13`) or an effect called (`sendOtp`, `login_ingestion`). */
export interface FlowTraceEntry {
  step: string;
  state: string;
  [detail: string]: unknown;
}

/** What the request's answer says, read from the state the machine settled on. */
export interface StepAnswer {
  ok: boolean;
  /** The state the user now sees (named for it): its key, unique across the machine. */
  state: string;
  /** `next_step`; null for the login screen and for refusals. */
  nextStep: StepId | null;
  flow: Flow | null;
  /** Only where the contract names one: `otp_phone` (62), `success` (90). */
  screen?: string;
  /** True once logged in (90): FeUpdateProfile's `done`. */
  done: boolean;
  /** Send metadata of a code sent by this request (`otp.otp` only when the OTP service put it there). */
  otp?: OtpSendMetadata;
  /** Issued by this request: answer `access_token`, set cookie `__utp`. */
  accessToken?: string;
  expiresIn?: number | null;
  /** The account acted on (for logs and the cookie's owner). */
  uid?: string;
  /** The phone this request's code went to where the user did not type it (E.164; the answer masks it). */
  phoneOnFile?: string;
  stayLoggedIn: boolean;
  /** The proof to sign and hand out as `data[proof.field]`. */
  proof?: NextProof;
  /** Set when `ok` is false: the envelope's `data.reason` and extra `data`. */
  failure?: FlowFailure;
}

export interface StepResult {
  nextStep: StepId | null;
  output: StepAnswer;
  trace: FlowTraceEntry[];
  /** Steps passed or settled on by this request, in order. */
  steps: StepId[];
  /** Effects invoked by this request, in order. */
  calls: string[];
  /** The state the request resumed at (machines/resume.ts), before its event. */
  from: string;
  /** Every state the request entered after its event, in order: the last is where it settled. */
  states: string[];
}

export interface RunStepOptions {
  input: LoginFlowInput;
  event: LoginFlowEvent;
  /** Upper bound for the whole request; each effect has its own, shorter, timeout. Default 60 s. */
  timeoutMs?: number;
  /** Entries are pushed here as they happen (pass the request's debug trace to interleave upstream calls). */
  trace?: Array<{ step: string }>;
  /**
   * Called with the request's actor system before the machine starts: effects receive the same
   * system (`fromPromise(({ system }) => ...)`), so a caller can hand them the request they serve
   * without rebuilding the machine per request.
   */
  attach?: (system: object) => void;
}

export class FlowTimeoutError extends Error {
  constructor(readonly state: string, timeoutMs: number) {
    super(`login flow did not settle within ${timeoutMs} ms (stuck in ${state})`);
    this.name = 'FlowTimeoutError';
  }
}

const INGEST = 'ingestLogin';

const stepOf = (snapshot: AnyMachineSnapshot): StepId | undefined => {
  for (const tag of snapshot.tags) {
    const step = stepOfTag(tag);
    if (step !== undefined) return step;
  }
  return undefined;
};

/*
 * The step of each state, read from its tags once per machine: the inspector below asks on
 * every microstep of every request, and a state's tags never change (state keys are unique
 * across the machine, docs/flows-design.md).
 */
const stepsByMachine = new WeakMap<object, Map<string, StepId | null>>();
function stepOfState(snapshot: AnyMachineSnapshot, state: string): StepId | undefined {
  let steps = stepsByMachine.get(snapshot.machine);
  if (!steps) stepsByMachine.set(snapshot.machine, (steps = new Map()));
  let step = steps.get(state);
  if (step === undefined) steps.set(state, (step = stepOf(snapshot) ?? null));
  return step ?? undefined;
}

/** The key of the (one) leaf state a snapshot is in: `awaitingPhoneCode`, not `{ phoneLogin: 'awaitingPhoneCode' }`. */
export function stateKeyOf(snapshot: Pick<AnyMachineSnapshot, 'value'>): string {
  let value = snapshot.value;
  // One key per level: the machine has no parallel states.
  while (typeof value === 'object') for (const key in value) value = value[key]!;
  return value;
}

const isSettled = (snapshot: AnyMachineSnapshot) => snapshot.status !== 'active' || snapshot.hasTag(SETTLED);

/** The answer for a settled snapshot of the login flow. */
export function answerOf(snapshot: AnyMachineSnapshot): StepAnswer {
  const context = snapshot.context as LoginFlowContext;
  const state = stateKeyOf(snapshot);
  const failed = snapshot.hasTag(FAILED);
  const step = failed ? undefined : stepOf(snapshot);
  const info = step === undefined ? undefined : STEP_INFO[step];
  const meta = Object.values(snapshot.getMeta() as Record<string, LoginFlowStateMeta>)[0];
  let proof: NextProof | undefined;
  if (!failed && step !== undefined && meta?.proof) {
    const kind = PROOF_KIND[meta.proof.field];
    const claims: NextProof['claims'] = { kind, flow: context.flow ?? undefined, step };
    for (const key of meta.proof.carries) {
      const value = context[key];
      if (value) claims[key] = value;
    }
    if (kind === PROOF_KIND.proof) {
      const verified: readonly string[] = context.flow ? CODE_VERIFIED[context.flow] : [];
      const linked = meta.proof.carries.filter((key) => claims[key] !== undefined && !verified.includes(key)).sort();
      if (linked.length > 0) claims.linked = linked;
    }
    proof = { field: meta.proof.field, claims };
  }
  return {
    ok: !failed,
    state,
    nextStep: step ?? null,
    flow: context.flow,
    ...(info?.wire ? { screen: info.screen } : {}),
    done: step === STEP.loggedIn,
    ...(context.otp ? { otp: context.otp } : {}),
    ...(context.accessToken ? { accessToken: context.accessToken, expiresIn: context.expiresIn ?? null } : {}),
    ...(context.uid ? { uid: context.uid } : {}),
    ...(!failed && meta?.showsPhone && context.phone ? { phoneOnFile: context.phone } : {}),
    stayLoggedIn: context.stayLoggedIn,
    ...(proof ? { proof } : {}),
    ...(failed ? { failure: context.failure ?? { reason: 'invalid_request' } } : {}),
  };
}

/**
 * Runs one request. Rejects with the effect's own error when an effect throws (an ApiError
 * such as `already_sent` or `upstream_error`), with FlowTimeoutError when nothing settles in
 * time, and with an Error when the resumed state does not take this event (a wiring bug).
 */
export async function runStep(machine: LoginFlowMachine, options: RunStepOptions): Promise<StepResult> {
  const { input, event, timeoutMs = 60_000 } = options;
  const trace: FlowTraceEntry[] = [];
  const steps: StepId[] = [];
  const calls: string[] = [];
  const states: string[] = [];
  let sent = false;
  let lastState: string | undefined;
  const started = new Set<string>();

  const record = (entry: FlowTraceEntry) => {
    trace.push(entry);
    options.trace?.push(entry);
  };
  const inspect = (inspection: InspectionEvent) => {
    if (!sent || inspection.type !== '@xstate.microstep' || inspection.actorRef.sessionId !== inspection.rootId) return;
    const snapshot = inspection.snapshot as AnyMachineSnapshot;
    const state = stateKeyOf(snapshot);
    if (state !== lastState) {
      lastState = state;
      states.push(state);
      const step = stepOfState(snapshot, state);
      if (step !== undefined) {
        steps.push(step);
        record({ step: `step_${step}`, state });
      }
    }
    // Effects are children invoked on entry: a child not seen before is a call made now.
    const children = snapshot.children as Record<string, { sessionId: string } | undefined>;
    for (const id in children) {
      const child = children[id];
      if (!child || started.has(child.sessionId)) continue;
      started.add(child.sessionId);
      calls.push(id);
      record({ step: id === INGEST ? 'login_ingestion' : id, state });
    }
  };

  if (event.type !== ENTRY_EVENT[input.entry]) throw new Error(`login flow: ${input.entry} sends ${ENTRY_EVENT[input.entry]}, not ${event.type}`);
  // Started directly in the state the request resumes (or `refused`): nothing runs before its event.
  const actor = createActor(machine, { snapshot: resumeSnapshot(machine, input), input, inspect });
  options.attach?.(actor.system);
  try {
    actor.start();
    const resumed = actor.getSnapshot();
    const from = stateKeyOf(resumed);
    if (resumed.status === 'active') {
      if (!resumed.can(event)) throw new Error(`login flow: state ${stateKeyOf(resumed)} does not take ${event.type}`);
      sent = true;
      lastState = stateKeyOf(resumed);
      actor.send(event);
    }
    let settled: AnyMachineSnapshot;
    try {
      settled = await waitFor(actor, isSettled, { timeout: timeoutMs });
    } catch (err) {
      const now = actor.getSnapshot();
      if (now.status === 'error') throw now.error;
      if (err instanceof Error && /timeout/i.test(err.message)) throw new FlowTimeoutError(stateKeyOf(now), timeoutMs);
      throw err;
    }
    if (settled.status === 'error') throw settled.error;
    const output = answerOf(settled);
    return { nextStep: output.nextStep, output, trace, steps, calls, from, states };
  } finally {
    actor.stop();
  }
}

