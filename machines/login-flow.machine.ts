import { fromPromise, type SnapshotFrom } from 'xstate';
import type { EffectName, FlowEffects } from './effects';
import { FAILED, SETTLED } from './steps';
import { initialContext } from './login-flow/context';
import { loginFlow } from './login-flow/setup';
import { askingPassword, enteringIdentifier } from './login-flow/login-screen';
import { phoneLogin } from './login-flow/phone-login';
import { emailLogin } from './login-flow/email-login';
import { registration } from './login-flow/registration';
import { addingPhone } from './login-flow/adding-phone';
import { profile } from './login-flow/profile';
import { ingestingLogin, issuingToken, loggedIn } from './login-flow/logged-in';
import { verifyingPasskey } from './login-flow/passkey-login';
import { passkeyEnrolment } from './login-flow/passkey-enrol';

/*
 * The login journey of docs/contract.md#steps as one machine: every optimised action (FeLogin, FeVerifyOtp,
 * FeRegister, FeAddPhone, FeUpdateProfile) is one user event sent to a state the user is
 * looking at. A request starts the machine directly in that state (machines/resume.ts: one
 * table from the action, its `flow`/`phase` and the proof it carries to the state it resumes),
 * sends its one event, and the machine runs its effects until it settles on the next state the
 * user must act on (tag `settled`) or refuses (final `refused`). Why one machine:
 * docs/flows-design.md.
 *
 * The journeys (phone login, email login, registration, adding a phone, the profile) are
 * compound states, one module each under machines/login-flow/, composed of the setup's guards,
 * actions and effects (setup.ts), the code step (code-step.ts) and the shared transitions
 * (transitions.ts); the states every completed login shares (token, ingest, `loggedIn`,
 * logged-in.ts) and the refusal are top-level. State keys are unique across the machine (the diagrams, the demo page
 * and the resume table name states by key): a transition that leaves its journey targets the
 * state by id, and every state entered from outside its journey has `id` equal to its key.
 *
 * Context is plain JSON. The identifiers in it (`uid`, `email`, `phone`) are only ever values
 * the proof vouched for, values a code was verified for, or facts of the account found; a
 * value merely typed by the caller is compared with them, never adopted, unless the state is
 * about to verify it by code (`takes`) or the caller is trusted (x-internal-key).
 */

export * from './login-flow/context';
export {
  ADMISSION_REFUSALS,
  CODE_REFUSALS,
  FLOW_FAILURE_REASONS,
  NAMED_REFUSALS,
  RESUME_REFUSALS,
  type FlowFailure,
  type FlowFailureReason,
} from './login-flow/refusals';

export const loginFlowMachine = loginFlow.createMachine({
  id: 'loginFlow',
  context: ({ input }) => initialContext(input),
  // A journey starts at the login screen; a request starts wherever its resume point says (machines/resume.ts).
  initial: 'enteringIdentifier',
  states: {
    enteringIdentifier,
    askingPassword,
    phoneLogin,
    emailLogin,
    registration,
    addingPhone,
    profile,
    verifyingPasskey,
    issuingToken,
    ingestingLogin,
    loggedIn,
    passkeyEnrolment,
    refused: {
      id: 'refused',
      description: 'The request is refused: `failure` says why; nothing else happened.',
      type: 'final',
      tags: [FAILED, SETTLED],
    },
  },
});

export type LoginFlowMachine = typeof loginFlowMachine;

type LeafOf<V> = V extends string ? V : V extends object ? { [K in keyof V]-?: LeafOf<V[K]> }[keyof V] : never;
/** The key of a leaf state (unique across the machine): what answers, traces and the resume table name. */
export type LoginFlowState = LeafOf<SnapshotFrom<LoginFlowMachine>['value']>;

/**
 * The machine with effects given as plain async functions, for tests and tools that keep one
 * machine per set of fakes (src/ hands each request its own to runStep instead). Effects left
 * out keep throwing "not provided".
 */
export function provideEffects(effects: Partial<FlowEffects>): LoginFlowMachine {
  const actors: Record<string, unknown> = {};
  for (const [name, effect] of Object.entries(effects) as Array<
    [EffectName, (input: unknown, signal: AbortSignal) => Promise<unknown>]
  >) {
    actors[name] = fromPromise(({ input, signal }) => effect(input, signal));
  }
  return loginFlowMachine.provide({ actors: actors as Parameters<LoginFlowMachine['provide']>[0]['actors'] });
}
