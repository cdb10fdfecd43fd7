import { STEP, type Entry, type FlowClaims } from '../../machines';
import type { Deps } from '../domain/deps';
import { looksLikePhone } from '../domain/phone';
import { isApiError } from '../core/errors';
import type { EffectsSeen } from './effects';
import { counts, createFunnelRecorder, funnelKnownTrails, journeyClaims, journeyOfClaims, nextTrail, stepLabel, trailTo, type FunnelRecorder } from './funnel';
import type { FlowStepRefused, FlowStepSeen, FunnelLineage, StepObserver } from './run-flow-action';

/*
 * The people funnel as an observer of the flow runner (docs/funnel.md): it names the request's
 * journey before the machine runs, hears each step's result and each refusal, and hands the
 * runner the journey and trail the next proof carries. Registered where the app is wired
 * (src/http/front-controller.ts); without it the runner counts nothing.
 */

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

/** The funnel's observer, or none when the funnel is off. */
export function funnelObserverFor(deps: Pick<Deps, 'config' | 'metrics' | 'funnel' | 'log' | 'now'>): StepObserver | undefined {
  const funnel = createFunnelRecorder(deps);
  return funnel ? createFunnelObserver(funnel, deps) : undefined;
}

/** `clock.now` is read at each event (a test may move the clock of the dependencies it built). */
export function createFunnelObserver(funnel: FunnelRecorder, clock: Pick<Deps, 'now'>): StepObserver {
  // The diagrams' trails, once loaded: a step is then counted without waiting on them.
  let known: ReadonlyMap<string, string[]> | undefined;
  const stepped = (step: FlowStepSeen, trails: ReadonlyMap<string, string[]>): FunnelLineage | undefined => {
    const { seen, output, from } = step;
    const journey = seen.journey;
    if (!journey) return undefined;
    journey.trail = trailTo(journey, from, trails);
    const carried = output.ok && output.state !== undefined && counts(journey) ? journeyClaims({ ...journey, trail: nextTrail(journey.trail, stepLabel(output.state)) }) : undefined;
    funnel({
      at: clock.now(),
      journey,
      from,
      ...toward(step.entry, step.request),
      outcome: output.ok ? 'ok' : (output.failure?.reason ?? 'invalid_request'),
      ...(output.ok ? { to: output.state } : {}),
      ...secondsOnScreen(from, step.claims, clock.now(), seen),
    });
    return carried;
  };
  return {
    // The funnel's journey: the proof's, else a new one unless a code record names one (effects.ts).
    begin: (seen, claims, startedMs) => {
      seen.journey = journeyOfClaims(claims, startedMs);
    },
    stepped: (step) =>
      known
        ? stepped(step, known)
        : funnelKnownTrails().then((trails) => {
            known = trails;
            return stepped(step, trails);
          }),
    // Refused before or while the machine ran (a bad phone, a spent proof, a limit, an upstream down): counted on the screen it came from.
    refused: ({ entry, request, seen, input, err }: FlowStepRefused) => {
      const where = input ? { input } : entry === 'login' ? { from: 'enteringIdentifier' } : {};
      funnel({ at: clock.now(), ...(seen.journey ? { journey: seen.journey } : {}), ...where, ...toward(entry, request), outcome: isApiError(err) ? err.reason : 'internal_error' });
    },
  };
}
