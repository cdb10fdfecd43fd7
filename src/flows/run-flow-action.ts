import {
  FlowTimeoutError,
  PROOF_KIND,
  flowRequest,
  loginFlowMachine,
  proofFieldFor,
  runStep,
  type EffectName,
  type Entry,
  type FlowClaims,
  type FlowEffects,
  type LoginFlowInput,
  type StepAnswer,
  type StepResult,
} from '../../machines';
import type { ServiceContext } from '../domain/deps';
import { looksLikePhone, requirePhone } from '../domain/phone';
import type { Config, PhoneChannel } from '../core/config/schema';
import type { Deps } from '../domain/deps';
import type { Span } from '../core/tracing';
import { apiError, isApiError } from '../core/errors';
import { PROOF_HEADER, refuseIfClaimedSince, trustedCaller } from '../domain/guard';
import { invalidProof, verifyProof } from '../domain/proofs';
import type { FunnelLineage } from '../domain/funnel/counting';
import type { EffectsSeen, StepObserver } from '../domain/funnel/observer';
import { answerData, failureError, type FlowAnswerData, type NextProofLineage } from './answer';
import { createFlowEffects, type SendFieldNames } from './effects';
import { journeyRecorderFor, type RequestRecording } from './journey-recorder';

/*
 * One request of an optimised action (docs/flows-http.md), in four steps: the claims (normalise
 * the phones, verify the proof the request carries), the proof (spent when the action may change
 * something with it), the step (restore the login machine there and send the action's one event)
 * and the answer (the envelope from the state it settles on). Every branch is the machine's; this
 * module only translates between HTTP and the machine. Who counts the steps (the funnel,
 * src/domain/funnel/observer.ts, which declares what the runner tells it) observes them from
 * outside (StepObserver), registered where the app is wired.
 */

/** Request fields holding a phone, normalised to E.164 before the machine sees them (`invalid_request` naming the field otherwise). */
const PHONE_FIELDS = ['phone', 'otp_phone'] as const;

/** How a refused send names the field the phone or email came from, per action. */
const SEND_FIELDS: Record<Entry, SendFieldNames> = {
  login: { key: 'identifier', phone: 'identifier', email: 'identifier' },
  verifyOtp: {},
  register: { key: 'email', email: 'email' },
  addPhone: { key: 'phone', phone: 'phone' },
  updateProfile: {},
  passkeyLogin: {},
  passkeyEnrolOptions: {},
  passkeyEnrol: {},
};

/**
 * The whole request may take the identity timeout plus half again: each upstream call has its
 * own timeout, this one only guarantees an answer (upstream_error) if an effect never settles.
 */
const flowTimeoutMs = (config: Config): number => config.identity.timeout_seconds * 1500;

function normalisePhones(body: Record<string, unknown>, region: string): Record<string, unknown> {
  const out = { ...body };
  for (const field of PHONE_FIELDS) {
    const value = out[field];
    if (typeof value === 'string' && value !== '') out[field] = requirePhone(value, field, region);
  }
  if (typeof out.identifier === 'string') {
    const identifier = out.identifier.trim();
    out.identifier = looksLikePhone(identifier) ? requirePhone(identifier, 'identifier', region) : identifier;
  }
  return out;
}

/** The claims of the proof named for this request, verified; undefined when none is presented. */
function presentedClaims(entry: Entry, body: Record<string, unknown>, ctx: ServiceContext): FlowClaims | undefined {
  const field = proofFieldFor(entry, body);
  if (!field) return undefined;
  // The `verified` proof is also read from the header the identity primitives accept.
  const token = body[field] || (field === 'proof' ? ctx.header(PROOF_HEADER) : undefined);
  if (!token) return undefined;
  return verifyProof(ctx.deps.proofKey, token, ctx.deps.now(), [PROOF_KIND[field]]);
}

/** Effects that change something: a proof that led to one is spent (docs/security.md). */
const CHANGES: ReadonlySet<string> = new Set<EffectName>([
  'claimAccount',
  'releasePhone',
  'registerUser',
  'confirmDoi',
  'updateProfile',
  'issueToken',
]);

/**
 * The presented proof, spent when this action may change something with it: the registration
 * form (register_proof), the code of a journey that continues (pending_proof) and the profile
 * (proof). Adding a phone only sends a code, so its proof stays usable for a resend.
 */
function spendsProof(
  entry: Entry,
  claims: FlowClaims | undefined,
): claims is FlowClaims & { jti: string; exp: number } {
  return (
    claims !== undefined &&
    typeof claims.jti === 'string' &&
    typeof claims.exp === 'number' &&
    entry !== 'addPhone' &&
    entry !== 'login' &&
    // An enrolment never spent its login proof: PasskeyEnrol presents the same one, and the person stays logged in with it.
    entry !== 'passkeyEnrolOptions' &&
    entry !== 'passkeyEnrol' &&
    claims.kind !== 'phone'
  );
}

const flowTimedOut = (err: FlowTimeoutError, timeoutMs: number) =>
  apiError('upstream_error', {
    params: { service: 'di accesso' },
    data: { upstream: 'login_flow', timeout_ms: timeoutMs },
    cause: err,
  });

/**
 * A request's answer: `data` as the contract's actions answer it, and, for a passkey enrolment,
 * what its ceremony's effect answered (its options, or the passkey kept), which is its action's answer.
 */
interface FlowRun {
  data: FlowAnswerData;
  ceremony?: StepAnswer['ceremony'];
}

/** Serves the optimised actions: one per process (the front controller builds it with the app). */
export interface FlowRunner {
  run(entry: Entry, request: Record<string, unknown>, ctx: ServiceContext): Promise<FlowRun>;
}

/**
 * The login machine is stepped without an actor (machines/run-step.ts): each request hands it its own effects.
 * `observer` (the funnel) hears every step; the journey recorder wraps the effects and the answer.
 */
export function createFlowRunner(deps: Deps, observer?: StepObserver): FlowRunner {
  // In the sandbox and with `debug` on, every request is recorded for replay (journey-recorder.ts); otherwise none is.
  const recorder = journeyRecorderFor(deps);
  return {
    run: (entry, request, ctx) => {
      const seen: EffectsSeen = {};
      // The phone's channel the caller asked for (validated by the action's schema): the sends of this request use it.
      const choice = typeof request.channel === 'string' ? { channel: request.channel as PhoneChannel } : {};
      const effects = createFlowEffects(deps, ctx, SEND_FIELDS[entry], seen, choice);
      if (!recorder) return runFlowAction(effects, entry, request, ctx, seen, undefined, observer);
      const recording = recorder.begin(entry, request, ctx);
      return recording.finish(runFlowAction(recording.wrap(effects), entry, request, ctx, seen, recording, observer));
    },
  };
}

async function runFlowAction(
  effects: FlowEffects,
  entry: Entry,
  request: Record<string, unknown>,
  ctx: ServiceContext,
  seen: EffectsSeen,
  recording?: RequestRecording,
  observer?: StepObserver,
): Promise<FlowRun> {
  const { deps } = ctx;
  const started = deps.now();
  let input: LoginFlowInput | undefined;
  let observed = false;
  try {
    const body = normalisePhones(request, deps.config.sms.default_region);
    const claims = presentedClaims(entry, body, ctx);
    observer?.begin(seen, claims, started);
    const trusted = trustedCaller(ctx);
    const parsed = flowRequest(entry, body, { claims, trusted });
    input = parsed.input;
    recording?.machineInput(body, input);
    const spent = !trusted && spendsProof(entry, claims) ? await spendProof(ctx, claims) : undefined;
    const result = await step(ctx, input, parsed.event, effects, spent, recording);
    const changed = result.calls.some((call) => CHANGES.has(call));
    // Nothing changed (a wrong code, a refusal, the next screen): the proof stays good for a retry.
    if (spent && !changed) await deps.otp.unspendProof(spent.jti);
    let carried: FunnelLineage | undefined;
    if (observer) {
      observed = true;
      carried = await observer.stepped({ entry, request, claims, seen, from: result.from, output: result.output });
    }
    logStep(ctx, entry, result, started);
    if (ctx.span) traceStep(ctx.span, result);
    return answer(ctx, result, claims, changed, carried);
  } catch (err) {
    if (observer && !observed) observer.refused({ entry, request, seen, input, err });
    // Refusals carry the trace too (the front controller adds it to successes only): that is when it helps most.
    if (isApiError(err) && deps.config.debug && ctx.trace.length > 0) Object.assign(err.extra, { debug: ctx.trace });
    throw err;
  }
}

/** The proof, spent before the machine runs, so two requests with one proof cannot both change something. */
async function spendProof(
  ctx: ServiceContext,
  claims: FlowClaims & { jti: string; exp: number },
): Promise<typeof claims> {
  if (typeof claims.iat === 'number') await refuseIfClaimedSince(ctx, { uid: claims.uid, iat: claims.iat });
  if (!(await ctx.deps.otp.spendProof(claims.jti, claims.exp * 1000))) throw invalidProof('spent');
  return claims;
}

/** The machine's step; a step that never settled gives the spent proof back. */
async function step(
  ctx: ServiceContext,
  input: LoginFlowInput,
  event: ReturnType<typeof flowRequest>['event'],
  effects: FlowEffects,
  spent: { jti: string } | undefined,
  recording?: RequestRecording,
): Promise<StepResult> {
  const timeoutMs = flowTimeoutMs(ctx.deps.config);
  try {
    // ctx.trace is the request's debug trace: flow steps and upstream calls land in it in the order they happen.
    return await runStep(loginFlowMachine, {
      input,
      event,
      effects,
      trace: ctx.trace,
      timeoutMs,
      entered: recording?.machineStarts(),
    });
  } catch (err) {
    if (spent) await ctx.deps.otp.unspendProof(spent.jti).catch(() => {});
    throw err instanceof FlowTimeoutError ? flowTimedOut(err, timeoutMs) : err;
  }
}

function logStep(ctx: ServiceContext, entry: Entry, result: StepResult, started: number): void {
  const { deps } = ctx;
  // Asked before the line is built: at warn, a request would otherwise make its child logger for nothing.
  if (!deps.log.isLevelEnabled('info')) return;
  const { output } = result;
  ctx.log.info(
    {
      flow_action: entry,
      flow: output.flow,
      next_step: output.nextStep,
      steps: result.steps,
      calls: result.calls,
      reason: output.failure?.reason,
      uid: output.uid,
      duration_ms: deps.now() - started,
    },
    'login flow step',
  );
}

/** The step on the action's span: the journey, where it resumed, where it goes, and why not further. */
function traceStep(span: Span, { output, from, steps }: StepResult): void {
  span.set({
    'lfa.flow': output.flow ?? 'none',
    'lfa.step.from': from,
    'lfa.step.to': output.nextStep ?? 'none',
    'lfa.steps': steps.join(' '),
    ...(output.failure ? { 'lfa.step.reason': output.failure.reason } : {}),
  });
}

/** The envelope of a settled step, with the lineage of the proof it hands out; a refusal is thrown. */
function answer(
  ctx: ServiceContext,
  result: StepResult,
  claims: FlowClaims | undefined,
  changed: boolean,
  carried: FunnelLineage | undefined,
): FlowRun {
  const { output } = result;
  if (!output.ok) throw failureError(output.failure ?? { reason: 'invalid_request' });
  // Nothing changed: the next proof continues this one (one phone proof, one registration). A change
  // spent it: a code verified now starts a new chain, else the new proof ends when this one would have.
  const verifiedCode = result.calls.includes('verifyOtp');
  const lineage: NextProofLineage =
    !claims?.jti || !claims.exp
      ? {}
      : !changed
        ? { continues: { jti: claims.jti, exp: claims.exp }, iat: claims.iat }
        : verifiedCode
          ? {}
          : { expires: claims.exp, iat: claims.iat };
  const data = answerData(output, ctx, carried ? { ...lineage, funnel: carried } : lineage);
  return output.ceremony ? { data, ceremony: output.ceremony } : { data };
}
