import {
  createActor,
  toPromise,
  type AnyActor,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type EventObject,
} from 'xstate';
import type { FlowEffects, NextProof, OtpSendMetadata } from './effects';
import { ENTRY_EVENT, PROOF_KIND } from './actions';
import type {
  FlowFailure,
  LoginFlowContext,
  LoginFlowEvent,
  LoginFlowInput,
  LoginFlowMachine,
  LoginFlowStateMeta,
} from './login-flow.machine';
import { macrostep, type Spawned } from './macrostep';
import { resumeSnapshot } from './resume';
import { CODE_VERIFIED, FAILED, SETTLED, STEP, STEP_INFO, stepOfTag, type Flow, type StepId } from './steps';

/*
 * One request of the login journey: resolve the machine at the state the request resumes
 * (machines/resume.ts), step it with its one event, run the effects the transitions invoke and
 * step it with their answers until it settles, and say what to answer. No actor: a request is
 * a handful of pure transitions (docs/flows-design.md, "One request").
 * No HTTP here: the Fe* handlers shape the envelope from `output`.
 *
 * Not XState's documented API: the machine is stepped through macrostep.ts (a hand-built actor
 * scope and `machine.microstep`), and an effect's answer goes back as an `xstate.done.actor.<id>`
 * or `xstate.error.actor.<id>` event built here (`doneEvent`, `errorEvent`) rather than by a
 * running child. macrostep.ts's header says what each relies on and what would replace it; XState
 * is pinned exactly for it.
 */

/** One line of the `debug` array: a step passed (`step_13`) or an effect called (`sendOtp`, `login_ingestion`). */
interface FlowTraceEntry {
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
  /** What a passkey enrolment's effect answered (its options, or the passkey kept): its action's answer. */
  ceremony?: LoginFlowContext['ceremony'];
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
   * This request's effects, as plain async functions: each receives a signal aborted when the
   * request gives up (timeout). Those left out are the machine's own actors (provideEffects).
   */
  effects?: Partial<FlowEffects>;
  /** Every state entered is also pushed here as it is entered (a recording keeps them when the request fails). */
  entered?: string[];
}

export class FlowTimeoutError extends Error {
  constructor(
    readonly state: string,
    timeoutMs: number,
  ) {
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
 * The step of each state, read from its tags once per machine: runStep asks on every
 * microstep of every request, and a state's tags never change (state keys are unique
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
function answerOf(snapshot: AnyMachineSnapshot): StepAnswer {
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
      // A passkey proved the account itself (its uid); a code, the identifiers of its flow.
      if (context.method) claims.method = context.method;
      const verified: readonly string[] = context.method ? ['uid'] : context.flow ? CODE_VERIFIED[context.flow] : [];
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
    ...(!failed && context.ceremony ? { ceremony: context.ceremony } : {}),
    ...(context.accessToken ? { accessToken: context.accessToken, expiresIn: context.expiresIn ?? null } : {}),
    ...(context.uid ? { uid: context.uid } : {}),
    ...(!failed && meta?.showsPhone && context.phone ? { phoneOnFile: context.phone } : {}),
    stayLoggedIn: context.stayLoggedIn,
    ...(proof ? { proof } : {}),
    ...(failed ? { failure: context.failure ?? { reason: 'invalid_request' } } : {}),
  };
}

/** An effect's answer, fed back to the machine as XState feeds an invoked actor's. */
const doneEvent = (id: string, output: unknown) => ({ type: `xstate.done.actor.${id}`, output, actorId: id });
const errorEvent = (id: string, error: unknown) => ({ type: `xstate.error.actor.${id}`, error, actorId: id });

type Effect = (input: unknown, signal: AbortSignal) => Promise<unknown>;

/**
 * Runs the effect a child names: the request's own (`effects`), else whatever actor the machine
 * was provided with (provideEffects' wrappers, a test's `fromPromise`, or the "not provided"
 * default), run as XState would run it and stopped when the signal aborts.
 */
function runEffect(child: Spawned, effects: Partial<FlowEffects> | undefined, signal: AbortSignal): Promise<unknown> {
  const effect = (effects as Record<string, Effect | undefined> | undefined)?.[child.src];
  if (effect) return effect(child.input, signal);
  const actor = createActor((child.ref as AnyActor).logic, { input: child.input });
  const answer = toPromise(actor);
  signal.addEventListener('abort', () => actor.stop(), { once: true });
  actor.start();
  return answer;
}

/**
 * Runs one request, without an actor: each event's transitions are resolved from the snapshot
 * (macrostep.ts), the effects they invoke are run here, and each effect's answer is the next
 * event, until the machine settles. Rejects with the effect's own error when an effect throws
 * (an ApiError such as `already_sent` or `upstream_error`), with FlowTimeoutError when nothing
 * settles in time, and with an Error when the resumed state does not take this event (a wiring bug).
 */
export async function runStep(machine: LoginFlowMachine, options: RunStepOptions): Promise<StepResult> {
  const { input, event, timeoutMs = 60_000, effects } = options;
  const trace: FlowTraceEntry[] = [];
  const steps: StepId[] = [];
  const calls: string[] = [];
  const states: string[] = [];
  const seen = new Set<AnyActorRef>();

  const record = (entry: FlowTraceEntry) => {
    trace.push(entry);
    options.trace?.push(entry);
  };

  if (event.type !== ENTRY_EVENT[input.entry])
    throw new Error(`login flow: ${input.entry} sends ${ENTRY_EVENT[input.entry]}, not ${event.type}`);
  // Resolved directly in the state the request resumes (or `refused`): nothing runs before its event.
  let snapshot: AnyMachineSnapshot = resumeSnapshot(machine, input);
  const from = stateKeyOf(snapshot);
  let lastState = from;
  if (snapshot.status === 'active' && !snapshot.can(event))
    throw new Error(`login flow: state ${from} does not take ${event.type}`);

  /** Steps passed and effects invoked, read from each microstep as it happened. */
  const observe = (microstep: AnyMachineSnapshot) => {
    const state = stateKeyOf(microstep);
    if (state !== lastState) {
      lastState = state;
      states.push(state);
      options.entered?.push(state);
      const step = stepOfState(microstep, state);
      if (step !== undefined) {
        steps.push(step);
        record({ step: `step_${step}`, state });
      }
    }
    // Effects are children invoked on entry: a child not seen before is a call made now.
    const children = microstep.children as Record<string, AnyActorRef | undefined>;
    for (const id in children) {
      const child = children[id];
      if (!child || seen.has(child)) continue;
      seen.add(child);
      calls.push(id);
      record({ step: id === INGEST ? 'login_ingestion' : id, state });
    }
  };

  return new Promise<StepResult>((resolve, reject) => {
    /** The children whose answer the machine awaits: an answer of any other is dropped (XState stopped it). */
    const awaited = new Set<AnyActorRef>();
    /**
     * One signal for the request's effects (an AbortController per effect cost about a third of
     * runStep's own time, its GC included): aborted when the request ends with an effect still
     * running (a timeout, a failure, an effect whose state the machine left), as XState stops a
     * running child; an effect that answered never sees it aborted.
     */
    let controller: AbortController | undefined;
    let unsettled = 0;
    let over = false;
    const stop = () => {
      over = true;
      clearTimeout(timer);
      awaited.clear();
      if (unsettled > 0) controller?.abort();
    };
    const fail = (error: unknown) => {
      stop();
      reject(error);
    };
    const settle = () => {
      stop();
      try {
        const output = answerOf(snapshot);
        resolve({ nextStep: output.nextStep, output, trace, steps, calls, from, states });
      } catch (err) {
        reject(err);
      }
    };
    const timer = setTimeout(() => fail(new FlowTimeoutError(stateKeyOf(snapshot), timeoutMs)), timeoutMs);

    const start = (child: Spawned) => {
      controller ??= new AbortController();
      awaited.add(child.ref);
      unsettled += 1;
      let answer: Promise<unknown>;
      try {
        answer = runEffect(child, effects, controller.signal);
      } catch (err) {
        answer = Promise.reject(err);
      }
      const answered = (event: EventObject) => {
        unsettled -= 1;
        if (awaited.delete(child.ref) && !over) send(event);
      };
      answer.then(
        (output) => answered(doneEvent(child.id, output)),
        (error: unknown) => answered(errorEvent(child.id, error)),
      );
    };

    const send = (next: EventObject) => {
      let spawned: Spawned[];
      try {
        const step = macrostep(machine, snapshot, next);
        for (const microstep of step.microsteps) observe(microstep);
        snapshot = step.microsteps[step.microsteps.length - 1] ?? snapshot;
        spawned = step.spawned;
      } catch (err) {
        return fail(err);
      }
      // An effect's error the machine does not handle fails the request with that error.
      if (snapshot.status === 'error') return fail(snapshot.error);
      for (const ref of awaited) if (snapshot.children[ref.id] !== ref) awaited.delete(ref);
      if (isSettled(snapshot)) return settle();
      for (const child of spawned) if (snapshot.children[child.id] === child.ref) start(child);
    };

    if (snapshot.status === 'active') send(event);
    else settle();
  });
}
