import type { ProofField } from './effects';

/*
 * The optimised actions of docs/contract.md, named once. Each action is one HTTP request and one user
 * event of the login machine; everything else that names an action (the entry the handlers
 * pass to the runner, the event the machine takes, the request field whose proof resumes the
 * journey) is read from this table, never written out a second time.
 */

/** FeRegister's phases (docs/contract.md#login-flows-optimised-actions). */
export const PHASES = ['email_otp', 'register'] as const;
export type Phase = (typeof PHASES)[number];

/** The kind a proof carries, one per request field that carries one. */
export const PROOF_KIND = {
  phone_proof: 'phone',
  pending_proof: 'pending',
  register_proof: 'register',
  proof: 'verified',
} as const satisfies Record<ProofField, string>;
export type ProofKind = (typeof PROOF_KIND)[ProofField];

interface ActionSpec {
  /** The short name the handlers pass to the runner (`runFlowAction(entry, ...)`). */
  entry: string;
  /** The one event this action sends to the machine. */
  event: string;
  /**
   * The request field whose proof resumes the journey: none, one field, or one per FeRegister
   * phase (a request without a phase is read from the field it carries).
   */
  proofField: ProofField | null | Readonly<Record<Phase, ProofField>>;
}

/** The contract's optimised actions (docs/contract.md), in its order. */
const CONTRACT_ACTIONS = {
  FeLogin: { entry: 'login', event: 'LOGIN', proofField: null },
  FeVerifyOtp: { entry: 'verifyOtp', event: 'VERIFY_OTP', proofField: 'pending_proof' },
  FeRegister: {
    entry: 'register',
    event: 'REGISTER',
    proofField: { email_otp: 'phone_proof', register: 'register_proof' },
  },
  FeAddPhone: { entry: 'addPhone', event: 'ADD_PHONE', proofField: 'proof' },
  FeUpdateProfile: { entry: 'updateProfile', event: 'UPDATE_PROFILE', proofField: 'proof' },
} as const satisfies Record<string, ActionSpec>;

/**
 * Actions outside the contract that are events of the same journey (docs/passkeys.md): the login
 * by passkey, from the login screen to 90 as a code login, through its own step (101); and the
 * enrolment after 90, options (102) then the new passkey (103). The login's `passkey_proof` is
 * the ceremony's, checked by the effect that verifies the assertion, not a journey proof: it
 * resumes nothing. The enrolment resumes with the `proof` answered at 90, as FeUpdateProfile.
 */
const PASSKEY_ACTIONS = {
  PasskeyLogin: { entry: 'passkeyLogin', event: 'PASSKEY_LOGIN', proofField: null },
  PasskeyEnrolOptions: { entry: 'passkeyEnrolOptions', event: 'PASSKEY_ENROL_OPTIONS', proofField: 'proof' },
  PasskeyEnrol: { entry: 'passkeyEnrol', event: 'PASSKEY_ENROL', proofField: 'proof' },
} as const satisfies Record<string, ActionSpec>;

export const ACTIONS = { ...CONTRACT_ACTIONS, ...PASSKEY_ACTIONS } as const;

/** An action that sends the login machine its one event: the contract's five, and the passkeys' three. */
export type FeAction = keyof typeof ACTIONS;
export type Entry = (typeof ACTIONS)[FeAction]['entry'];
/** The user events of the login machine, one per action. */
export type UserEventType = (typeof ACTIONS)[FeAction]['event'];

/** The contract's actions in its order: what the contract's tables and checks list (passkeys apart). */
export const FE_ACTIONS = Object.keys(CONTRACT_ACTIONS) as FeAction[];
/** Every action of the machine: the contract's, then the passkeys'. */
export const MACHINE_ACTIONS = Object.keys(ACTIONS) as FeAction[];

const derive = <K extends string, V>(pairs: Array<[K, V]>): Record<K, V> => Object.fromEntries(pairs) as Record<K, V>;

/** Action -> entry (the handlers' `runFlowAction(ACTION_ENTRY.FeLogin, ...)`). */
export const ACTION_ENTRY = derive(MACHINE_ACTIONS.map((a) => [a, ACTIONS[a].entry])) as {
  readonly [A in FeAction]: (typeof ACTIONS)[A]['entry'];
};
/** Entry -> action. */
export const ENTRY_ACTION = derive(MACHINE_ACTIONS.map((a) => [ACTIONS[a].entry, a])) as Record<Entry, FeAction>;
/** Entry -> the one event its request sends. */
export const ENTRY_EVENT = derive(MACHINE_ACTIONS.map((a) => [ACTIONS[a].entry, ACTIONS[a].event])) as Record<
  Entry,
  UserEventType
>;
/** Event -> the action that sends it. */
export const EVENT_ACTION = derive(MACHINE_ACTIONS.map((a) => [ACTIONS[a].event, a])) as Record<
  UserEventType,
  FeAction
>;

/** The request field whose proof resumes the journey, or null when the action needs none. */
export function proofFieldFor(entry: Entry, body: Record<string, unknown>): ProofField | null {
  const field = ACTIONS[ENTRY_ACTION[entry]].proofField;
  if (field === null || typeof field === 'string') return field;
  if (body.phase === 'email_otp' || body.phase === 'register') return field[body.phase];
  return body[field.register] ? field.register : field.email_otp;
}
