import { STEP, type Entry, type FlowClaims, type LoginFlowInput, type StepAnswer } from '../../../machines';
import type { Deps } from '../deps';
import { looksLikePhone } from '../phone';
import { isApiError } from '../../core/errors';
import {
  counts,
  createFunnelRecorder,
  funnelKnownTrails,
  journeyClaims,
  journeyOfClaims,
  nextTrail,
  stepLabel,
  trailTo,
  type FunnelJourney,
  type FunnelLineage,
  type FunnelRecorder,
} from './counting';

/*
 * The people funnel as an observer of the flow runner (docs/funnel.md): it names the request's
 * journey before the machine runs, hears each step's result and each refusal, and hands the
 * runner the journey and trail the next proof carries. Registered where the app is wired
 * (src/http/front-controller.ts); without it the runner counts nothing. The runner
 * (src/flows/run-flow-action.ts) is one layer up, so what it tells its observer is declared
 * here, with the one observer it has.
 */

/** What the request's effects saw that the flow runner counts (the funnel): nothing about the person. */
export interface EffectsSeen {
  /** When the code this request had accepted was issued (epoch ms). */
  codeSentAt?: number;
  /** The funnel's journey of the request: a code record it sent or checked may name the one it belongs to. */
  journey?: FunnelJourney;
}

/** A step as its observers hear it: the request, its claims, what its effects saw, and where the machine went. */
export interface FlowStepSeen {
  entry: Entry;
  request: Record<string, unknown>;
  claims: FlowClaims | undefined;
  seen: EffectsSeen;
  /** The state the request resumed at. */
  from: string;
  output: StepAnswer;
}

/** A request refused before or while the machine ran; `input` once the request was read. */
interface FlowStepRefused {
  entry: Entry;
  request: Record<string, unknown>;
  seen: EffectsSeen;
  input: LoginFlowInput | undefined;
  err: unknown;
}

/**
 * Who watches the runner's steps from outside it (the funnel, below). Each request hears
 * `begin`, then `stepped` once the machine settled or `refused` if it never did.
 */
export interface StepObserver {
  /** Before the machine runs: may name the request's journey in `seen`, which the effects read. */
  begin(seen: EffectsSeen, claims: FlowClaims | undefined, startedMs: number): void;
  /** The machine settled (accepted or not); answers the lineage the next proof carries, if any. */
  stepped(step: FlowStepSeen): FunnelLineage | undefined | Promise<FunnelLineage | undefined>;
  refused(refusal: FlowStepRefused): void;
}

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
function secondsOnScreen(
  from: string,
  claims: FlowClaims | undefined,
  nowMs: number,
  seen: EffectsSeen,
): { seconds?: number } {
  const shown = claims?.shown;
  if (typeof shown === 'number' && claims?.step !== undefined && String(claims.step) === stepLabel(from))
    return { seconds: Math.max(0, (nowMs - shown) / 1000) };
  // A code screen without its own proof (14, 33): from the moment the code it accepted was issued,
  // which is when the answer that showed the screen was given (a resend shows it again, and restarts it).
  if (seen.codeSentAt !== undefined) return { seconds: Math.max(0, (nowMs - seen.codeSentAt) / 1000) };
  return {};
}

/** The funnel's observer, or none when the funnel is off. */
export function funnelObserverFor(
  deps: Pick<Deps, 'config' | 'metrics' | 'funnel' | 'log' | 'now'>,
): StepObserver | undefined {
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
    const carried =
      output.ok && output.state !== undefined && counts(journey)
        ? journeyClaims({ ...journey, trail: nextTrail(journey.trail, stepLabel(output.state)) })
        : undefined;
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
    // The funnel's journey: the proof's, else a new one unless a code record names one (src/flows/effects.ts).
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
      funnel({
        at: clock.now(),
        ...(seen.journey ? { journey: seen.journey } : {}),
        ...where,
        ...toward(entry, request),
        outcome: isApiError(err) ? err.reason : 'internal_error',
      });
    },
  };
}
