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
  STEP,
} from '../../machines';
import type { ServiceContext } from '../domain/deps';
import { looksLikePhone, requirePhone } from '../domain/phone';
import type { Config, PhoneChannel } from '../core/config/schema';
import type { Deps } from '../domain/deps';
import { apiError, isApiError } from '../core/errors';
import { PROOF_HEADER, refuseIfClaimedSince, trustedCaller } from '../domain/guard';
import { invalidProof, verifyProof } from '../domain/proofs';
import { answerData, failureError, type FlowAnswerData, type NextProofLineage } from './answer';
import { createFlowEffects, type EffectsSeen, type SendFieldNames } from './effects';
import { journeyRecorderFor, type RequestRecording } from './journey-recorder';
import { counts, createFunnelRecorder, funnelKnownTrails, journeyClaims, journeyOfClaims, nextTrail, stepLabel, trailTo, type FunnelRecorder } from './funnel';

/*
 * One request of an optimised action (docs/flows-http.md): normalise the phones, verify the
 * proof the request carries, restore the login machine there, send the action's one event,
 * and shape the envelope from the state it settles on. Every branch is the machine's; this
 * module only translates between HTTP and the machine.
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
};

/**
 * The whole request may take the identity timeout plus half again: each upstream call has its
 * own timeout, this one only guarantees an answer (upstream_error) if an effect never settles.
 */
export const flowTimeoutMs = (config: Config): number => config.identity.timeout_seconds * 1500;


/**
 * The code screen a first screen's request was heading for (a phone's 14, an email's 33, the
 * registration email's 23), as a funnel step label: where a person turned away at the door was
 * going, and the screen an early resend's journey is on. Read from what was typed, never kept.
 */
function towardOf(entry: Entry, request: Record<string, unknown>): string | undefined {
  if (entry === 'register') return String(STEP.enterRegistrationEmailCode);
  if (entry !== 'login' || typeof request.identifier !== 'string') return undefined;
  if (looksLikePhone(request.identifier)) return String(STEP.enterPhoneCode);
  return request.identifier.includes('@') ? String(STEP.enterEmailCode) : undefined;
}

const toward = (entry: Entry, request: Record<string, unknown>): { toward?: string } => {
  const found = towardOf(entry, request);
  return found === undefined ? {} : { toward: found };
};

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
const CHANGES: ReadonlySet<string> = new Set<EffectName>(['claimAccount', 'releasePhone', 'registerUser', 'confirmDoi', 'updateProfile', 'issueToken']);

/**
 * The presented proof, spent when this action may change something with it: the registration
 * form (register_proof), the code of a journey that continues (pending_proof) and the profile
 * (proof). Adding a phone only sends a code, so its proof stays usable for a resend.
 */
function spendsProof(entry: Entry, claims: FlowClaims | undefined): claims is FlowClaims & { jti: string; exp: number } {
  return claims !== undefined && typeof claims.jti === 'string' && typeof claims.exp === 'number' && entry !== 'addPhone' && entry !== 'login' && claims.kind !== 'phone';
}

/**
 * How long the user was on the screen this request acts on: from the moment the answer that
 * showed it handed out its proof (`shown`, src/flows/answer.ts) to now. Only when the proof is
 * that screen's (same step): a proof carried on from an earlier screen would count both.
 */
function secondsOnScreen(from: string, claims: FlowClaims | undefined, nowMs: number, seen: EffectsSeen): { seconds?: number } {
  const shown = claims?.shown;
  if (typeof shown === 'number' && claims?.step !== undefined && String(claims.step) === stepLabel(from)) return { seconds: Math.max(0, (nowMs - shown) / 1000) };
  // A code screen without its own proof (14, 33): from the moment the code it accepted was issued,
  // which is when the answer that showed the screen was given (a resend shows it again, and restarts it).
  if (seen.codeSentAt !== undefined) return { seconds: Math.max(0, (nowMs - seen.codeSentAt) / 1000) };
  return {};
}

const flowTimedOut = (err: FlowTimeoutError, timeoutMs: number) =>
  apiError('upstream_error', { params: { service: 'di accesso' }, data: { upstream: 'login_flow', timeout_ms: timeoutMs }, cause: err });

/** Serves the optimised actions: one per process (the front controller builds it with the app). */
export interface FlowRunner {
  run(entry: Entry, request: Record<string, unknown>, ctx: ServiceContext): Promise<{ data: FlowAnswerData }>;
}

/** The login machine is stepped without an actor (machines/run-step.ts): each request hands it its own effects. */
export function createFlowRunner(deps: Deps): FlowRunner {
  // In the sandbox and with `debug` on, every request is recorded for replay (journey-recorder.ts); otherwise none is.
  const recorder = journeyRecorderFor(deps);
  const funnel = createFunnelRecorder(deps);
  return {
    run: (entry, request, ctx) => {
      const seen: EffectsSeen = {};
      // The phone's channel the caller asked for (validated by the action's schema): the sends of this request use it.
      const choice = typeof request.channel === 'string' ? { channel: request.channel as PhoneChannel } : {};
      const effects = createFlowEffects(deps, ctx, SEND_FIELDS[entry], seen, choice);
      if (!recorder) return runFlowAction(effects, entry, request, ctx, seen, undefined, funnel);
      const recording = recorder.begin(entry, request, ctx);
      return recording.finish(runFlowAction(recording.wrap(effects), entry, request, ctx, seen, recording, funnel));
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
  funnel?: FunnelRecorder,
): Promise<{ data: FlowAnswerData }> {
  const { deps } = ctx;
  const started = deps.now();
  let input: LoginFlowInput | undefined;
  let counted = false;
  try {
    const body = normalisePhones(request, deps.config.sms.default_region);
    const claims = presentedClaims(entry, body, ctx);
    // The funnel's journey: the proof's, else a new one unless a code record names one (effects.ts).
    if (funnel) seen.journey = journeyOfClaims(claims, started);
    const trusted = trustedCaller(ctx);
    const parsed = flowRequest(entry, body, { claims, trusted });
    input = parsed.input;
    const { event } = parsed;
    recording?.machineInput(body, input);
    const timeoutMs = flowTimeoutMs(deps.config);
    // Spent before the machine runs, so two requests with one proof cannot both change something.
    const spends = !trusted && spendsProof(entry, claims);
    if (spends) {
      if (typeof claims.iat === 'number') await refuseIfClaimedSince(ctx, { uid: claims.uid, iat: claims.iat });
      if (!(await deps.otp.spendProof(claims.jti, claims.exp * 1000))) throw invalidProof('spent');
    }
    let result;
    try {
      // ctx.trace is the request's debug trace: flow steps and upstream calls land in it in the order they happen.
      result = await runStep(loginFlowMachine, { input, event, effects, trace: ctx.trace, timeoutMs, entered: recording?.machineStarts() });
    } catch (err) {
      if (spends) await deps.otp.unspendProof(claims.jti).catch(() => {});
      throw err instanceof FlowTimeoutError ? flowTimedOut(err, timeoutMs) : err;
    }
    const changed = result.calls.some((call) => CHANGES.has(call));
    // Nothing changed (a wrong code, a refusal, the next screen): the proof stays good for a retry.
    if (spends && !changed) await deps.otp.unspendProof(claims.jti);
    const { output } = result;
    let carried: NextProofLineage['funnel'];
    if (funnel && seen.journey) {
      counted = true;
      const journey = seen.journey;
      journey.trail = trailTo(journey, result.from, await funnelKnownTrails());
      if (output.ok && output.state !== undefined && counts(journey)) carried = journeyClaims({ ...journey, trail: nextTrail(journey.trail, stepLabel(output.state)) });
      funnel({
        at: deps.now(),
        journey,
        from: result.from,
        ...toward(entry, request),
        outcome: output.ok ? 'ok' : (output.failure?.reason ?? 'invalid_request'),
        ...(output.ok ? { to: output.state } : {}),
        ...secondsOnScreen(result.from, claims, deps.now(), seen),
      });
    }
    // Asked before the line is built: at warn, a request would otherwise make its child logger for nothing.
    if (deps.log.isLevelEnabled('info')) {
      ctx.log.info(
        { flow_action: entry, flow: output.flow, next_step: output.nextStep, steps: result.steps, calls: result.calls, reason: output.failure?.reason, uid: output.uid, duration_ms: deps.now() - started },
        'login flow step',
      );
    }
    if (!output.ok) throw failureError(output.failure ?? { reason: 'invalid_request' });
    // Nothing changed: the next proof continues this one (one phone proof, one registration). A change
    // spent it: a code verified now starts a new chain, else the new proof ends when this one would have.
    const verifiedCode = result.calls.includes('verifyOtp');
    const lineage: NextProofLineage =
      !claims?.jti || !claims.exp ? {} : !changed ? { continues: { jti: claims.jti, exp: claims.exp }, iat: claims.iat } : verifiedCode ? {} : { expires: claims.exp, iat: claims.iat };
    return { data: answerData(output, ctx, carried ? { ...lineage, funnel: carried } : lineage) };
  } catch (err) {
    // Refused before or while the machine ran (a bad phone, a spent proof, a limit, an upstream down): counted on the screen it came from.
    if (funnel && !counted) {
      const where = input ? { input } : entry === 'login' ? { from: 'enteringIdentifier' } : {};
      funnel({ at: deps.now(), ...(seen.journey ? { journey: seen.journey } : {}), ...where, ...toward(entry, request), outcome: isApiError(err) ? err.reason : 'internal_error' });
    }
    // Refusals carry the trace too (the front controller adds it to successes only): that is when it helps most.
    if (isApiError(err) && deps.config.debug && ctx.trace.length > 0) Object.assign(err.extra, { debug: ctx.trace });
    throw err;
  }
}
