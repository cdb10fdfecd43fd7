import {
  ENTRY_ACTION,
  proofFieldFor,
  resumePointFor,
  type Entry,
  type FlowClaims,
  type FlowEffects,
  type LoginFlowInput,
  type StepId,
} from '../../machines';
import type { Config } from '../core/config/schema';
import { isApiError } from '../core/errors';
import type { Deps, ServiceContext } from '../domain/deps';
import { verifyProof } from '../domain/proofs';
import {
  RECORDING_FORMAT,
  maskSecrets,
  recordedClaims,
  type RecordedAnswer,
  type RecordedEffect,
  type RecordedJourney,
  type RecordedRequest,
} from './journey-recording';

/*
 * Records every optimised action's request, in the sandbox and wherever `debug` is on, well
 * enough to replay the journey against the machine (scripts/replay.ts): the body the machine
 * was given, the proof's claims, the states entered, the steps passed, each effect with what it
 * returned, and the answer, all masked (journey-recording.ts). In memory, bounded: the journeys
 * active most recently (50), each its last 100 requests. GET /_sandbox/journeys lists them.
 *
 * A request joins a journey (docs/flows-http.md):
 *   1. by the proof it presents: every answer's proof id (`jti`) names the journey it was
 *      handed out in, and proofs continue one another;
 *   2. else by the phone, email or uid it names: the journey that named one of them most
 *      recently, if active within the last 15 minutes (a proof's lifetime). A journey start
 *      (FeLogin, FeRegister phase email_otp without a proof) does not join one that reached 90:
 *      it begins a new journey;
 *   3. else it begins a new journey.
 *
 * The runner asks for the recorder once (journeyRecorderFor); with recording off it gets none
 * and nothing of this runs.
 */

export interface RecorderOptions {
  /** Journeys kept (the most recently active). */
  capacity?: number;
  /** Requests kept per journey (the latest). */
  maxRequests?: number;
  /** A request without a known proof joins a journey about its phone/email active this recently. */
  idleMs?: number;
}

interface StoredJourney {
  journey: RecordedJourney;
  updatedMs: number;
  /** An answer reached 90: a new FeLogin about the same identifiers starts another journey. */
  done: boolean;
}

type Body = Record<string, unknown>;

/** FeLogin, or FeRegister phase email_otp without a proof: the first request of a journey. */
const startsJourney = (entry: Entry, body: Body, claims: FlowClaims | undefined) =>
  !claims && (entry === 'login' || (entry === 'register' && body.phase === 'email_otp'));

/** The identifiers a request is about: `phone:+39...`, `email:...`, `uid:...`. */
function subjectsOf(body: Body, claims: FlowClaims | undefined): string[] {
  const subjects = new Set<string>();
  const add = (kind: 'phone' | 'email' | 'uid', value: unknown) => {
    if (typeof value !== 'string' || value === '') return;
    const v = value.trim();
    subjects.add(kind === 'email' ? `email:${v.toLowerCase()}` : `${kind}:${v}`);
  };
  if (typeof body.identifier === 'string') add(body.identifier.includes('@') ? 'email' : 'phone', body.identifier);
  add('phone', body.phone);
  add('phone', body.otp_phone);
  add('email', body.email);
  add('uid', body.uid);
  add('phone', claims?.phone);
  add('email', claims?.email);
  add('uid', claims?.uid);
  return [...subjects];
}

/** A step of the trace (`step_24b`) as a StepId. */
const stepOfEntry = (step: string): StepId => {
  const raw = step.slice('step_'.length);
  return (/^\d+$/.test(raw) ? Number(raw) : raw) as StepId;
};

/** One request being recorded: the runner feeds it, then `finish` files it into its journey. */
export class RequestRecording {
  private readonly at: string;
  private body: Body;
  private claims: FlowClaims | undefined;
  private input: LoginFlowInput | undefined;
  private resumed: string | undefined;
  private readonly states: string[] = [];
  private readonly effects: RecordedEffect[] = [];
  private readonly traceStart: number;

  constructor(
    private readonly recorder: JourneyRecorder,
    private readonly entry: Entry,
    request: Body,
    private readonly ctx: ServiceContext,
  ) {
    this.at = new Date(ctx.deps.now()).toISOString();
    this.body = request;
    this.traceStart = ctx.trace.length;
  }

  /** The body the machine is given (phones normalised) and its input (the verified claims, trusted). */
  machineInput(body: Body, input: LoginFlowInput): void {
    this.body = body;
    this.input = input;
    this.claims = input.claims ?? undefined;
  }

  /** The machine starts (the request was not refused before it): every state it enters is pushed to the list returned (runStep's `entered`). */
  machineStarts(): string[] {
    if (this.input) this.resumed = resumePointFor(this.input)?.state ?? 'refused';
    return this.states;
  }

  /** The request's effects, each call recorded with its masked input and what it returned or threw. */
  wrap(effects: FlowEffects): FlowEffects {
    const wrapped: Record<string, (input: unknown, signal: AbortSignal) => Promise<unknown>> = {};
    for (const [name, effect] of Object.entries(effects) as Array<
      [RecordedEffect['name'], (input: unknown, signal: AbortSignal) => Promise<unknown>]
    >) {
      wrapped[name] = async (input, signal) => {
        const call: RecordedEffect = { name, input: maskSecrets(input), outcome: 'pending' };
        this.effects.push(call);
        try {
          const output = await effect(input, signal);
          call.outcome = 'ok';
          if (output !== undefined) call.output = maskSecrets(output);
          return output;
        } catch (err) {
          call.outcome = 'error';
          call.error = isApiError(err)
            ? { reason: err.reason, message: err.message }
            : { message: err instanceof Error ? err.name : 'error' };
          throw err;
        }
      };
    }
    return wrapped as unknown as FlowEffects;
  }

  /** Files the request into its journey once answered (or refused); the answer passes through untouched. */
  finish<T extends { data: Body }>(answer: Promise<T>): Promise<T> {
    return answer.then(
      (result) => {
        this.file({ status: 200, success: true, error: null, data: maskSecrets(result.data) as Body }, result.data);
        return result;
      },
      (err: unknown) => {
        this.file(
          isApiError(err)
            ? {
                status: err.status,
                success: false,
                error: err.message,
                data: { reason: err.reason, ...(maskSecrets(err.data) as Body) },
              }
            : { status: 500, success: false, error: 'internal_error', data: { reason: 'internal_error' } },
        );
        throw err;
      },
    );
  }

  private file(answer: RecordedAnswer, data?: Body): void {
    try {
      const trace = this.ctx.trace.slice(this.traceStart) as Array<{
        step: string;
        state?: unknown;
        status?: unknown;
        outcome?: unknown;
      }>;
      const steps = trace
        .filter((e) => typeof e.state === 'string' && e.step.startsWith('step_'))
        .map((e) => stepOfEntry(e.step));
      const upstream = trace
        .filter((e) => e.state === undefined)
        .map((e) => ({
          call: e.step,
          ...(e.status !== undefined ? { status: e.status } : {}),
          ...(e.outcome !== undefined ? { outcome: e.outcome } : {}),
        }));
      if (this.resumed !== undefined && this.states.length > 0) answer.state = this.states[this.states.length - 1];
      else if (this.resumed !== undefined) answer.state = this.resumed;
      const field = proofFieldFor(this.entry, this.body);
      const request: Omit<RecordedRequest, 'n'> = {
        at: this.at,
        action: ENTRY_ACTION[this.entry],
        body: maskSecrets(this.body) as Body,
        ...(this.claims && field ? { proof_claims: { field, claims: recordedClaims(this.claims) } } : {}),
        ...(this.input?.trusted ? { trusted: true as const } : {}),
        ...(this.resumed !== undefined ? { resumed: this.resumed } : {}),
        states: this.states,
        steps,
        effects: this.effects,
        upstream,
        answer,
      };
      this.recorder.file(this.entry, this.body, this.claims, request, data);
    } catch (err) {
      // Recording never fails a request.
      this.ctx.deps.log.warn({ err: err instanceof Error ? err.message : 'error' }, 'journey recording failed');
    }
  }
}

export class JourneyRecorder {
  private readonly journeys = new Map<string, StoredJourney>();
  /** Proof id -> journey id; phone/email/uid -> journey id. Stale entries are dropped as the map grows. */
  private readonly byProof = new Map<string, string>();
  private readonly bySubject = new Map<string, string>();
  private sequence = 0;
  private readonly capacity: number;
  private readonly maxRequests: number;
  private readonly idleMs: number;

  constructor(
    private readonly deps: Pick<Deps, 'secret' | 'now'>,
    options: RecorderOptions = {},
  ) {
    this.capacity = options.capacity ?? 50;
    this.maxRequests = options.maxRequests ?? 100;
    this.idleMs = options.idleMs ?? 15 * 60_000;
  }

  /** Starts recording one request (the runner calls it first). */
  begin(entry: Entry, request: Body, ctx: ServiceContext): RequestRecording {
    return new RequestRecording(this, entry, request, ctx);
  }

  /** The journeys, most recently active first. */
  list(): RecordedJourney[] {
    return [...this.journeys.values()].reverse().map((s) => s.journey);
  }

  get(id: string): RecordedJourney | undefined {
    return this.journeys.get(id)?.journey;
  }

  clear(): void {
    this.journeys.clear();
    this.byProof.clear();
    this.bySubject.clear();
  }

  /** @internal Called by RequestRecording.finish. */
  file(
    entry: Entry,
    body: Body,
    claims: FlowClaims | undefined,
    request: Omit<RecordedRequest, 'n'>,
    data: Body | undefined,
  ): void {
    const now = this.deps.now();
    const subjects = subjectsOf(body, claims);
    let stored = claims?.jti ? this.stored(this.byProof.get(claims.jti)) : undefined;
    if (!stored) {
      const recent = subjects
        .map((subject) => this.stored(this.bySubject.get(subject)))
        .filter((s): s is StoredJourney => s !== undefined && now - s.updatedMs <= this.idleMs)
        .sort((a, b) => b.updatedMs - a.updatedMs)[0];
      if (recent && !(recent.done && startsJourney(entry, body, claims))) stored = recent;
    }
    if (!stored) {
      stored = {
        journey: {
          format: RECORDING_FORMAT,
          id: `j-${++this.sequence}`,
          about: [],
          started_at: request.at,
          updated_at: request.at,
          requests: [],
        },
        updatedMs: now,
        done: false,
      };
    }
    const { journey } = stored;
    const last = journey.requests[journey.requests.length - 1];
    journey.requests.push({ n: (last?.n ?? 0) + 1, ...request });
    if (journey.requests.length > this.maxRequests) journey.requests.shift();
    journey.updated_at = new Date(now).toISOString();
    stored.updatedMs = now;
    if (data?.done === true) stored.done = true;

    // Most recently active last: the first entry is the one to evict.
    this.journeys.delete(journey.id);
    this.journeys.set(journey.id, stored);
    if (typeof data?.uid === 'string') subjects.push(`uid:${data.uid}`);
    for (const subject of subjects) {
      if (!journey.about.includes(subject) && journey.about.length < 16) journey.about.push(subject);
      this.bySubject.set(subject, journey.id);
    }
    const handedOut = this.proofIdOf(data);
    if (handedOut) this.byProof.set(handedOut, journey.id);
    while (this.journeys.size > this.capacity) this.journeys.delete(this.journeys.keys().next().value as string);
    this.prune();
  }

  private stored(id: string | undefined): StoredJourney | undefined {
    return id === undefined ? undefined : this.journeys.get(id);
  }

  /** The id of the proof an answer hands out (any of the four fields). */
  private proofIdOf(data: Body | undefined): string | undefined {
    if (!data) return undefined;
    for (const field of ['proof', 'pending_proof', 'register_proof', 'phone_proof']) {
      const token = data[field];
      if (typeof token !== 'string') continue;
      try {
        return verifyProof(this.deps.secret, token, this.deps.now()).jti;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /** Index entries of evicted journeys are dropped once the indexes outgrow what the kept journeys can name. */
  private prune(): void {
    const limit = this.capacity * 64;
    for (const index of [this.byProof, this.bySubject]) {
      if (index.size <= limit) continue;
      for (const [key, id] of index) if (!this.journeys.has(id)) index.delete(key);
    }
  }
}

const recorders = new WeakMap<Deps, JourneyRecorder>();

/** Recording is on in the sandbox and wherever `debug` is on (both refused when NODE_ENV=production). */
const recordsJourneys = (config: Config): boolean => config.sandbox.enabled || config.debug;

/** The recorder of this process's dependencies: made on first call when recording is on, undefined when off. */
export function journeyRecorderFor(deps: Deps): JourneyRecorder | undefined {
  const existing = recorders.get(deps);
  if (existing || !recordsJourneys(deps.config)) return existing;
  return recordJourneys(deps);
}

/** Turns recording on for these dependencies whatever the configuration (tests, tools); before the app is built. */
function recordJourneys(deps: Deps, options: RecorderOptions = {}): JourneyRecorder {
  const existing = recorders.get(deps);
  if (existing) return existing;
  const recorder = new JourneyRecorder(deps, options);
  recorders.set(deps, recorder);
  return recorder;
}
