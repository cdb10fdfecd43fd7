import { assign, fromPromise, setup } from 'xstate';
import type {
  ConfirmDoiInput,
  EffectName,
  FlowEffects,
  ConfirmDoiOutput,
  FlowClaims,
  IngestLoginInput,
  IssueTokenInput,
  IssueTokenOutput,
  LookupUserByEmailInput,
  LookupUserByEmailOutput,
  OtpSendMetadata,
  ProfileFields,
  ProofField,
  RegisterUserInput,
  RegisterUserOutput,
  SearchUserByPhoneInput,
  SearchUserByPhoneOutput,
  SendOtpInput,
  SendOtpOutput,
  UpdateProfileInput,
  UpdateProfileOutput,
  UserLookupOutput,
  VerifyOtpInput,
  VerifyOtpOutput,
} from './effects';
import { FAILED, SETTLED, STEP, stepTag, type Flow, type StepId } from './steps';

/*
 * The login journey of SPEC.md as one machine: every optimised action (FeLogin, FeVerifyOtp,
 * FeRegister, FeAddPhone, FeUpdateProfile) is one user event sent to a state the user is
 * looking at. A request restores the machine there (`restoring` routes on the input: the
 * action, its `flow`/`phase` and the claims of the proof it carries), sends its one event, and
 * the machine runs its effects until it settles on the next state the user must act on
 * (tag `settled`) or refuses (final `refused`). Why one machine: docs/flows-design.md.
 *
 * Context is plain JSON. The identifiers in it (`uid`, `email`, `phone`) are only ever values
 * the proof vouched for, values a code was verified for, or facts of the account found; a
 * value merely typed by the caller is compared with them, never adopted, unless the state is
 * about to verify it by code (`takes`) or the caller is trusted (x-internal-key).
 */

export type Entry = 'login' | 'verifyOtp' | 'register' | 'addPhone' | 'updateProfile';
export type Phase = 'email_otp' | 'register';

export interface LoginFlowInput {
  /** The optimised action serving the request. */
  entry: Entry;
  /** The request's `flow` (FeVerifyOtp, FeAddPhone). */
  flow?: Flow;
  /** FeRegister's `phase`. */
  phase?: Phase;
  /** Claims of the proof the request carried, already verified (signature, expiry) by the caller. */
  claims?: FlowClaims | null;
  /** The caller needs no proof: `x-internal-key`, or `security.guard_primitives` off. */
  trusted?: boolean;
}

export interface LoginEvent {
  type: 'LOGIN';
  /** E.164 phone or email. */
  identifier: string;
  /** `password` asks for the password path (email only). */
  method?: 'otp' | 'password';
}
export interface VerifyOtpEvent {
  type: 'VERIFY_OTP';
  otp_code: string;
  flow?: Flow;
  phone?: string;
  email?: string;
  uid?: string;
  stay_logged_in?: boolean;
}
export interface RegisterEvent {
  type: 'REGISTER';
  phase?: Phase;
  email?: string;
  phone?: string;
  consents?: Record<string, unknown>;
  otp?: boolean;
  is_magic_link_sent?: boolean;
  first_name?: string;
  last_name?: string;
  birth_date?: string;
  city?: string;
}
export interface AddPhoneEvent {
  type: 'ADD_PHONE';
  /** The phone to add, E.164. */
  phone: string;
  uid?: string;
  email?: string;
  flow?: Flow;
}
export interface UpdateProfileEvent {
  type: 'UPDATE_PROFILE';
  uid: string;
  first_name?: string;
  last_name?: string;
  birth_date?: string;
  city?: string;
  /** E.164. */
  otp_phone?: string;
  email?: string;
  stay_logged_in?: boolean;
}
export type LoginFlowEvent = LoginEvent | VerifyOtpEvent | RegisterEvent | AddPhoneEvent | UpdateProfileEvent;

/** Why a request was refused: `data.reason` of the envelope. */
export type FlowFailureReason =
  | 'invalid'
  | 'expired'
  | 'too_many_attempts'
  | 'phone_taken'
  | 'phone_not_verified'
  | 'proof_required'
  | 'invalid_proof'
  | 'invalid_request';

export interface FlowFailure {
  reason: FlowFailureReason;
  data?: Record<string, unknown>;
}

export interface LoginFlowContext {
  entry: Entry;
  trusted: boolean;
  claims: FlowClaims | null;
  flow: Flow | null;
  phase: Phase | null;
  /** The request being served (its event); null until it arrives. */
  request: LoginFlowEvent | null;
  uid?: string;
  email?: string;
  phone?: string;
  /** A verified phone to save as `otp_phone` (step 42). */
  pendingPhone?: string;
  stayLoggedIn: boolean;
  otp?: OtpSendMetadata;
  accessToken?: string;
  expiresIn?: number | null;
  failure?: FlowFailure;
}

/** State meta: the proof the answer hands out when the request settles there. */
export interface LoginFlowStateMeta {
  proof?: { field: ProofField; kind: string; carries: Array<'uid' | 'email' | 'phone'> };
}

type Identifier = 'uid' | 'email' | 'phone';
export interface AdmitParams {
  /** Identifiers the request must end up naming (`code`: the event's otp_code; `account`: uid or email). */
  needs: Array<Identifier | 'code' | 'account'>;
  /** Identifiers this state adopts from the event because it is about to verify them by code. */
  takes?: Identifier[];
}

const IDENTIFIERS_OF: Record<LoginFlowEvent['type'], Identifier[]> = {
  LOGIN: [],
  VERIFY_OTP: ['uid', 'email', 'phone'],
  REGISTER: ['email', 'phone'],
  // ADD_PHONE's `phone` is the new phone, not an identifier of the account.
  ADD_PHONE: ['uid', 'email'],
  UPDATE_PROFILE: ['uid', 'email'],
};

const sameValue = (key: Identifier, a: string, b: string) => (key === 'email' ? a.toLowerCase() === b.toLowerCase() : a === b);
const present = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

interface Admission {
  ok: boolean;
  reason?: 'invalid_proof' | 'invalid_request';
  field?: string;
  ids: Partial<Record<Identifier, string>>;
}

/**
 * Whether the request may act here, and on whom. An identifier the request names must match
 * what the proof (or an earlier step) vouched for; a mismatch means a proof from another
 * user's flow (`invalid_proof`). Missing identifiers are `invalid_request`.
 */
export function admit(context: LoginFlowContext, event: LoginFlowEvent, params: AdmitParams): Admission {
  const ids: Partial<Record<Identifier, string>> = { uid: context.uid, email: context.email, phone: context.phone };
  for (const key of IDENTIFIERS_OF[event.type]) {
    const given = (event as unknown as Record<string, unknown>)[key];
    if (!present(given)) continue;
    const known = ids[key];
    if (known !== undefined && !context.trusted) {
      if (!sameValue(key, known, given)) return { ok: false, reason: 'invalid_proof', field: key, ids };
    } else if (context.trusted || params.takes?.includes(key)) {
      ids[key] = key === 'email' ? given.trim().toLowerCase() : given.trim();
    }
  }
  for (const need of params.needs) {
    if (need === 'code' && !(event.type === 'VERIFY_OTP' && present(event.otp_code))) return { ok: false, reason: 'invalid_request', field: 'otp_code', ids };
    if (need === 'account' && !ids.uid && !ids.email) return { ok: false, reason: 'invalid_request', field: 'uid', ids };
    if ((need === 'uid' || need === 'email' || need === 'phone') && !ids[need]) return { ok: false, reason: 'invalid_request', field: need, ids };
  }
  return { ok: true, ids };
}

export interface RestoreParams {
  entry: Entry;
  flows?: Flow[];
  phases?: Phase[];
  /** The step and kind of the proof this state is resumed from. */
  step?: StepId;
  kind?: string;
  /** Only for a trusted caller, who carries no proof. */
  trusted?: true;
}

/** True when the request resumes the journey at this state. */
export function restoresAt(context: LoginFlowContext, params: RestoreParams): boolean {
  if (context.entry !== params.entry) return false;
  if (params.flows && !(context.flow !== null && params.flows.includes(context.flow))) return false;
  // A missing phase is read from the proof's step.
  if (params.phases && context.phase !== null && !params.phases.includes(context.phase)) return false;
  if (params.trusted && !context.trusted) return false;
  if (params.step === undefined) return true;
  const claims = context.claims;
  return claims !== null && String(claims.step) === String(params.step) && claims.kind === params.kind;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const E164 = /^\+[1-9]\d{5,14}$/;
const outputOf = <T>(event: unknown): T => (event as { output: T }).output;
const requestOf = <T extends LoginFlowEvent['type']>(context: LoginFlowContext, type: T) =>
  (context.request?.type === type ? context.request : undefined) as Extract<LoginFlowEvent, { type: T }> | undefined;

/** Fields of step 40 (identity) and step 42 (custom) the request asks to save. */
export function profileFields(context: LoginFlowContext, step: 40 | 42): ProfileFields {
  const request = context.request;
  const form = request?.type === 'REGISTER' || request?.type === 'UPDATE_PROFILE' ? request : undefined;
  const pick = (source: Record<string, unknown> | undefined, keys: Array<keyof ProfileFields>): ProfileFields => {
    const fields: ProfileFields = {};
    for (const key of keys) if (source && present(source[key])) fields[key] = (source[key] as string).trim();
    return fields;
  };
  if (step === 40) {
    const fields = pick(form as Record<string, unknown> | undefined, ['first_name', 'last_name']);
    // Only a trusted caller changes the email: with a proof, the request's email must be the proof's (admit), so nothing changes.
    if (form?.type === 'UPDATE_PROFILE' && context.trusted && present(form.email)) fields.email = form.email.trim();
    return fields;
  }
  const fields = pick(form as Record<string, unknown> | undefined, ['city', 'birth_date']);
  if (context.pendingPhone) fields.otp_phone = context.pendingPhone;
  return fields;
}
const hasFields = (fields: ProfileFields) => Object.keys(fields).length > 0;
/** Who asks whether a phone is free: the account acted on (its uid, else its email). */
const accountOf = (context: LoginFlowContext): string | undefined => context.uid ?? context.email;

const notProvided = <I, O>(name: string) =>
  fromPromise<O, I>(async () => {
    throw new Error(`login flow: effect "${name}" is not provided (machine.provide({ actors }))`);
  });

/** A user-event transition pair: accepted (adopting identifiers) or refused with the reason `admit` gives. */
type AdmittedExtra = { type: 'setFlow'; params: { flow: Flow } } | { type: 'savePhoneLater' };
const admitted = (target: string, params: AdmitParams, more: AdmittedExtra[] = []) => [
  { guard: { type: 'requestAccepted' as const, params }, target, actions: [{ type: 'accept' as const, params }, ...more] },
  { target: 'refused', actions: [{ type: 'refuseRequest' as const, params }] },
];

export const loginFlowMachine = setup({
  types: {
    context: {} as LoginFlowContext,
    events: {} as LoginFlowEvent,
    input: {} as LoginFlowInput,
    meta: {} as LoginFlowStateMeta,
  },
  actors: {
    sendOtp: notProvided<SendOtpInput, SendOtpOutput>('sendOtp'),
    verifyOtp: notProvided<VerifyOtpInput, VerifyOtpOutput>('verifyOtp'),
    searchUserByPhone: notProvided<SearchUserByPhoneInput, SearchUserByPhoneOutput>('searchUserByPhone'),
    lookupUserByEmail: notProvided<LookupUserByEmailInput, LookupUserByEmailOutput>('lookupUserByEmail'),
    registerUser: notProvided<RegisterUserInput, RegisterUserOutput>('registerUser'),
    confirmDoi: notProvided<ConfirmDoiInput, ConfirmDoiOutput>('confirmDoi'),
    updateProfile: notProvided<UpdateProfileInput, UpdateProfileOutput>('updateProfile'),
    issueToken: notProvided<IssueTokenInput, IssueTokenOutput>('issueToken'),
    ingestLogin: notProvided<IngestLoginInput, void>('ingestLogin'),
  },
  guards: {
    restoresAt: ({ context }, params: RestoreParams) => restoresAt(context, params),
    hasProof: ({ context }) => context.claims !== null,
    requestAccepted: ({ context, event }, params: AdmitParams) => admit(context, event, params).ok,
    wantsPassword: ({ event }) => event.type === 'LOGIN' && event.method === 'password' && EMAIL.test(event.identifier.trim()),
    identifierIsPhone: ({ event }) => event.type === 'LOGIN' && E164.test(event.identifier.trim()),
    identifierIsEmail: ({ event }) => event.type === 'LOGIN' && EMAIL.test(event.identifier.trim()),
    codeAccepted: ({ event }) => outputOf<VerifyOtpOutput>(event) === 'ok',
    userFound: ({ event }) => outputOf<UserLookupOutput>(event).found,
    userFoundWithPhone: ({ event }) => {
      const user = outputOf<UserLookupOutput>(event);
      return user.found && present(user.phone);
    },
    knowsPhone: ({ context }) => present(context.phone),
    phoneTakenByOther: ({ context, event }) => {
      const holder = outputOf<UserLookupOutput>(event);
      return holder.found && holder.uid !== context.uid;
    },
    knowsUid: ({ context }) => present(context.uid),
    profilePhoneUnverified: ({ context }) => {
      const request = requestOf(context, 'UPDATE_PROFILE');
      return present(request?.otp_phone) && !context.trusted && request.otp_phone !== context.phone;
    },
    changesPhone: ({ context }) => present(requestOf(context, 'UPDATE_PROFILE')?.otp_phone),
    hasIdentityFields: ({ context }) => hasFields(profileFields(context, 40)),
    hasCustomFields: ({ context }) => hasFields(profileFields(context, 42)),
    saveRefused: ({ event }) => outputOf<UpdateProfileOutput>(event).outcome === 'phone_taken',
  },
  actions: {
    accept: assign(({ context, event }, params: AdmitParams) => {
      const { ids } = admit(context, event, params);
      const stay = (event as { stay_logged_in?: unknown }).stay_logged_in;
      return { request: event, ...ids, stayLoggedIn: typeof stay === 'boolean' ? stay : context.stayLoggedIn };
    }),
    acceptLogin: assign(({ event }) => {
      const identifier = event.type === 'LOGIN' ? event.identifier.trim() : '';
      return E164.test(identifier) ? { request: event, phone: identifier } : { request: event, email: identifier.toLowerCase() };
    }),
    /** The identifiers of the proof that resumed the journey are what the request may act on. */
    adoptProof: assign(({ context }) => {
      const claims = context.claims;
      if (!claims) return {};
      return {
        ...(claims.uid ? { uid: claims.uid } : {}),
        ...(claims.email ? { email: claims.email.toLowerCase() } : {}),
        ...(claims.phone ? { phone: claims.phone } : {}),
      };
    }),
    setFlow: assign((_, params: { flow: Flow }) => ({ flow: params.flow })),
    keepOtp: assign(({ event }) => ({ otp: outputOf<SendOtpOutput>(event) })),
    /** The holder of the phone just verified. */
    adoptUser: assign(({ context, event }) => {
      const user = outputOf<UserLookupOutput>(event);
      return user.found ? { uid: user.uid, email: user.email?.toLowerCase() ?? context.email, phone: user.phone ?? context.phone } : {};
    }),
    /** The account of the email just verified: its phone on file is the account's, whatever the request said. */
    adoptAccount: assign(({ context, event }) => {
      const user = outputOf<UserLookupOutput>(event);
      return user.found ? { uid: user.uid, email: user.email?.toLowerCase() ?? context.email, phone: user.phone } : {};
    }),
    adoptSavedPhone: assign(({ context }) => (context.pendingPhone ? { phone: context.pendingPhone } : {})),
    /** The verified phone of this journey becomes the one to save. */
    savePhoneLater: assign(({ context }) => ({ pendingPhone: context.phone })),
    keepProfilePhone: assign(({ context }) => ({ pendingPhone: requestOf(context, 'UPDATE_PROFILE')?.otp_phone })),
    adoptRegisteredUid: assign(({ event }) => ({ uid: outputOf<RegisterUserOutput>(event).uid })),
    keepToken: assign(({ event }) => {
      const token = outputOf<IssueTokenOutput>(event);
      return { accessToken: token.access_token, expiresIn: token.expires_in ?? null };
    }),
    refuse: assign((_, params: FlowFailure) => ({ failure: params })),
    refuseRequest: assign(({ context, event }, params: AdmitParams) => {
      const admission = admit(context, event, params);
      return { request: event, failure: { reason: admission.reason ?? 'invalid_request', data: admission.field ? { field: admission.field } : {} } };
    }),
    refuseCode: assign(({ event }) => ({ failure: { reason: outputOf<VerifyOtpOutput>(event) as FlowFailureReason, data: { valid: false } } })),
  },
}).createMachine({
  id: 'loginFlow',
  context: ({ input }) => ({
    entry: input.entry,
    trusted: input.trusted === true,
    claims: input.claims ?? null,
    flow: input.flow ?? (input.claims?.flow as Flow | undefined) ?? null,
    phase: input.phase ?? null,
    request: null,
    stayLoggedIn: true,
  }),
  initial: 'restoring',
  states: {
    restoring: {
      description: 'Routes the request to the state its action, flow, phase and proof resume.',
      always: [
        { guard: { type: 'restoresAt', params: { entry: 'login' } }, target: 'enteringIdentifier' },
        { guard: { type: 'restoresAt', params: { entry: 'verifyOtp', flows: ['phone'] } }, target: 'awaitingPhoneCode' },
        { guard: { type: 'restoresAt', params: { entry: 'verifyOtp', flows: ['phone_register', 'email_register'], step: STEP.enterRegistrationEmailCode, kind: 'pending' } }, target: 'awaitingRegistrationEmailCode', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'verifyOtp', flows: ['email', 'email_with_phone', 'email_register'] } }, target: 'awaitingEmailCode' },
        { guard: { type: 'restoresAt', params: { entry: 'verifyOtp', flows: ['email_add_phone', 'email_register_phone'], step: STEP.enterNewPhoneCode, kind: 'pending' } }, target: 'awaitingNewPhoneCode', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'register', phases: ['email_otp'], step: STEP.enterRegistrationEmail, kind: 'phone' } }, target: 'askingRegistrationEmail', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'register', phases: ['register'], step: STEP.registrationForm, kind: 'register' } }, target: 'fillingPhoneRegistrationForm', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'register', phases: ['register'], step: STEP.newUserForm, kind: 'register' } }, target: 'fillingEmailRegistrationForm', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'addPhone', step: STEP.addPhone, kind: 'verified' } }, target: 'askingPhone', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'addPhone', step: STEP.loggedIn, kind: 'verified' } }, target: 'loggedIn', actions: 'adoptProof' },
        { guard: { type: 'restoresAt', params: { entry: 'updateProfile', step: STEP.loggedIn, kind: 'verified' } }, target: 'loggedIn', actions: 'adoptProof' },
        // Without a proof: an email registration starts here (no phone verified first).
        { guard: { type: 'restoresAt', params: { entry: 'register', phases: ['email_otp'] } }, target: 'enteringRegistrationEmail' },
        // A trusted caller (x-internal-key) resumes where a proof would have put it.
        { guard: { type: 'restoresAt', params: { entry: 'verifyOtp', flows: ['phone_register'], trusted: true } }, target: 'awaitingRegistrationEmailCode' },
        { guard: { type: 'restoresAt', params: { entry: 'verifyOtp', flows: ['email_add_phone', 'email_register_phone'], trusted: true } }, target: 'awaitingNewPhoneCode' },
        { guard: { type: 'restoresAt', params: { entry: 'register', phases: ['register'], trusted: true } }, target: 'fillingEmailRegistrationForm' },
        { guard: { type: 'restoresAt', params: { entry: 'addPhone', trusted: true } }, target: 'askingPhone' },
        { guard: { type: 'restoresAt', params: { entry: 'updateProfile', trusted: true } }, target: 'loggedIn' },
        { guard: 'hasProof', target: 'refused', actions: { type: 'refuse', params: { reason: 'invalid_proof' } } },
        { target: 'refused', actions: { type: 'refuse', params: { reason: 'proof_required' } } },
      ],
    },

    enteringIdentifier: {
      description: 'The login screen: phone or email.',
      tags: [SETTLED],
      on: {
        LOGIN: [
          { guard: 'wantsPassword', target: 'askingPassword', actions: ['acceptLogin', { type: 'setFlow', params: { flow: 'email' } }] },
          { guard: 'identifierIsPhone', target: 'sendingSmsCode', actions: ['acceptLogin', { type: 'setFlow', params: { flow: 'phone' } }] },
          { guard: 'identifierIsEmail', target: 'sendingEmailCode', actions: ['acceptLogin', { type: 'setFlow', params: { flow: 'email' } }] },
          { target: 'refused', actions: { type: 'refuse', params: { reason: 'invalid_request', data: { field: 'identifier' } } } },
        ],
      },
    },
    askingPassword: { type: 'final', tags: [stepTag(STEP.enterPassword), SETTLED] },

    // Phone login
    sendingSmsCode: {
      tags: [stepTag(STEP.smsCodeSent)],
      invoke: {
        id: 'sendOtp',
        src: 'sendOtp',
        input: ({ context }) => ({ key: context.phone!, phone: context.phone! }),
        onDone: { target: 'awaitingPhoneCode', actions: 'keepOtp' },
      },
    },
    awaitingPhoneCode: {
      tags: [stepTag(STEP.enterPhoneCode), SETTLED],
      on: { VERIFY_OTP: admitted('verifyingPhoneCode', { needs: ['phone', 'code'], takes: ['phone'] }) },
    },
    verifyingPhoneCode: {
      invoke: {
        id: 'verifyOtp',
        src: 'verifyOtp',
        input: ({ context }) => ({ key: context.phone!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
        onDone: [{ guard: 'codeAccepted', target: 'findingUserByPhone' }, { target: 'refused', actions: 'refuseCode' }],
      },
    },
    findingUserByPhone: {
      invoke: {
        id: 'searchUserByPhone',
        src: 'searchUserByPhone',
        input: ({ context }) => ({ phone: context.phone! }),
        onDone: [
          { guard: 'userFound', target: 'issuingToken', actions: ['adoptUser', { type: 'setFlow', params: { flow: 'phone' } }] },
          { target: 'askingRegistrationEmail', actions: { type: 'setFlow', params: { flow: 'phone_register' } } },
        ],
      },
    },

    // Registration by email code, after a verified phone (24) or from scratch
    enteringRegistrationEmail: {
      description: 'Email registration without a verified phone: the email to send the code to.',
      tags: [SETTLED],
      on: {
        REGISTER: admitted('sendingRegistrationEmailCode', { needs: ['email'], takes: ['email'] }, [{ type: 'setFlow', params: { flow: 'email_register' } }]),
      },
    },
    askingRegistrationEmail: {
      tags: [stepTag(STEP.enterRegistrationEmail), SETTLED],
      meta: { proof: { field: 'phone_proof', kind: 'phone', carries: ['phone'] } },
      on: { REGISTER: admitted('sendingRegistrationEmailCode', { needs: ['phone', 'email'], takes: ['email'] }) },
    },
    sendingRegistrationEmailCode: {
      invoke: {
        id: 'sendOtp',
        src: 'sendOtp',
        input: ({ context }) => ({ key: context.email!, email: context.email! }),
        onDone: { target: 'awaitingRegistrationEmailCode', actions: 'keepOtp' },
      },
    },
    awaitingRegistrationEmailCode: {
      tags: [stepTag(STEP.enterRegistrationEmailCode), SETTLED],
      meta: { proof: { field: 'pending_proof', kind: 'pending', carries: ['phone', 'email'] } },
      on: { VERIFY_OTP: admitted('verifyingRegistrationEmailCode', { needs: ['email', 'code'] }) },
    },
    verifyingRegistrationEmailCode: {
      description: 'The registration email code, checked against the pending proof.',
      tags: [stepTag(STEP.enterRegistrationEmail)],
      invoke: {
        id: 'verifyOtp',
        src: 'verifyOtp',
        input: ({ context }) => ({ key: context.email!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
        onDone: [{ guard: 'codeAccepted', target: 'checkingRegistrationEmail' }, { target: 'refused', actions: 'refuseCode' }],
      },
    },
    checkingRegistrationEmail: {
      description: 'Both codes verified: an account may already hold the email.',
      tags: [stepTag(STEP.userLookup)],
      invoke: {
        id: 'lookupUserByEmail',
        src: 'lookupUserByEmail',
        input: ({ context }) => ({ email: context.email! }),
        onDone: [
          // The account keeps its own phone; the one just verified is not saved over it.
          { guard: 'userFoundWithPhone', target: 'confirmingDoi', actions: 'adoptAccount' },
          { guard: 'userFound', target: 'confirmingDoi', actions: ['savePhoneLater', 'adoptAccount'] },
          { guard: 'knowsPhone', target: 'issuingRegisterProof', actions: { type: 'setFlow', params: { flow: 'phone_register' } } },
          { target: 'fillingEmailRegistrationForm', actions: { type: 'setFlow', params: { flow: 'email_register' } } },
        ],
      },
    },
    issuingRegisterProof: {
      tags: [stepTag(STEP.registerProofIssued)],
      always: { target: 'fillingPhoneRegistrationForm' },
    },
    fillingPhoneRegistrationForm: {
      tags: [stepTag(STEP.registrationForm), SETTLED],
      meta: { proof: { field: 'register_proof', kind: 'register', carries: ['phone', 'email'] } },
      on: { REGISTER: admitted('checkingRegistrationPhone', { needs: ['phone', 'email'] }, [{ type: 'savePhoneLater' }]) },
    },
    checkingRegistrationPhone: {
      invoke: {
        id: 'searchUserByPhone',
        src: 'searchUserByPhone',
        input: ({ context }) => ({ phone: context.pendingPhone!, account: accountOf(context) }),
        onDone: [
          { guard: 'phoneTakenByOther', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_taken' } } },
          { target: 'registeringUser' },
        ],
      },
    },

    // Email login
    sendingEmailCode: {
      tags: [stepTag(STEP.emailCodeSent)],
      invoke: {
        id: 'sendOtp',
        src: 'sendOtp',
        input: ({ context }) => ({ key: context.email!, email: context.email! }),
        onDone: { target: 'awaitingEmailCode', actions: 'keepOtp' },
      },
    },
    awaitingEmailCode: {
      tags: [stepTag(STEP.enterEmailCode), SETTLED],
      on: { VERIFY_OTP: admitted('verifyingEmailCode', { needs: ['email', 'code'], takes: ['email'] }) },
    },
    verifyingEmailCode: {
      tags: [stepTag(STEP.emailVerification)],
      invoke: {
        id: 'verifyOtp',
        src: 'verifyOtp',
        input: ({ context }) => ({ key: context.email!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
        onDone: [{ guard: 'codeAccepted', target: 'lookingUpUser' }, { target: 'refused', actions: 'refuseCode' }],
      },
    },
    lookingUpUser: {
      tags: [stepTag(STEP.userLookup)],
      invoke: {
        id: 'lookupUserByEmail',
        src: 'lookupUserByEmail',
        input: ({ context }) => ({ email: context.email! }),
        onDone: [
          { guard: 'userFound', target: 'checkingPhoneOnFile', actions: 'adoptAccount' },
          { target: 'fillingEmailRegistrationForm', actions: { type: 'setFlow', params: { flow: 'email_register' } } },
        ],
      },
    },
    checkingPhoneOnFile: {
      tags: [stepTag(STEP.accountFound)],
      always: [
        { guard: 'knowsPhone', target: 'welcomingBack', actions: { type: 'setFlow', params: { flow: 'email_with_phone' } } },
        { target: 'askingPhone', actions: { type: 'setFlow', params: { flow: 'email_add_phone' } } },
      ],
    },
    welcomingBack: {
      tags: [stepTag(STEP.knownUserWithPhone)],
      always: { target: 'issuingToken' },
    },
    fillingEmailRegistrationForm: {
      tags: [stepTag(STEP.newUserForm), SETTLED],
      meta: { proof: { field: 'register_proof', kind: 'register', carries: ['email'] } },
      on: { REGISTER: admitted('registeringUser', { needs: ['email'] }, [{ type: 'setFlow', params: { flow: 'email_register_phone' } }]) },
    },

    // Adding a phone (account without one, or a logged-in user)
    askingPhone: {
      tags: [stepTag(STEP.addPhone), SETTLED],
      meta: { proof: { field: 'proof', kind: 'verified', carries: ['uid', 'email'] } },
      on: { ADD_PHONE: admitted('checkingNewPhone', { needs: ['account'] }) },
    },
    checkingNewPhone: {
      invoke: {
        id: 'searchUserByPhone',
        src: 'searchUserByPhone',
        input: ({ context }) => ({ phone: requestOf(context, 'ADD_PHONE')!.phone, account: accountOf(context) }),
        onDone: [
          { guard: 'phoneTakenByOther', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_taken' } } },
          { target: 'sendingNewPhoneCode' },
        ],
      },
    },
    sendingNewPhoneCode: {
      invoke: {
        id: 'sendOtp',
        src: 'sendOtp',
        input: ({ context }) => {
          const phone = requestOf(context, 'ADD_PHONE')!.phone;
          return { key: phone, phone };
        },
        onDone: {
          target: 'awaitingNewPhoneCode',
          actions: ['keepOtp', assign(({ context }) => ({ phone: requestOf(context, 'ADD_PHONE')!.phone, flow: context.flow ?? 'email_add_phone' }))],
        },
      },
    },
    awaitingNewPhoneCode: {
      tags: [stepTag(STEP.enterNewPhoneCode), SETTLED],
      meta: { proof: { field: 'pending_proof', kind: 'pending', carries: ['uid', 'email', 'phone'] } },
      on: { VERIFY_OTP: admitted('verifyingNewPhoneCode', { needs: ['phone', 'code'] }) },
    },
    verifyingNewPhoneCode: {
      invoke: {
        id: 'verifyOtp',
        src: 'verifyOtp',
        input: ({ context }) => ({ key: context.phone!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
        onDone: [{ guard: 'codeAccepted', target: 'recheckingNewPhone', actions: 'savePhoneLater' }, { target: 'refused', actions: 'refuseCode' }],
      },
    },
    recheckingNewPhone: {
      description: 'The phone may have been taken since the code went out.',
      invoke: {
        id: 'searchUserByPhone',
        src: 'searchUserByPhone',
        input: ({ context }) => ({ phone: context.pendingPhone!, account: accountOf(context) }),
        onDone: [
          { guard: 'phoneTakenByOther', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_taken' } } },
          { guard: 'knowsUid', target: 'savingProfile' },
          { target: 'refused', actions: { type: 'refuse', params: { reason: 'invalid_request', data: { field: 'uid' } } } },
        ],
      },
    },

    // Profile update
    reviewingProfile: {
      always: [
        { guard: 'profilePhoneUnverified', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_not_verified', data: { field: 'otp_phone' } } } },
        { guard: 'changesPhone', target: 'checkingProfilePhone', actions: 'keepProfilePhone' },
        { target: 'savingProfile' },
      ],
    },
    checkingProfilePhone: {
      invoke: {
        id: 'searchUserByPhone',
        src: 'searchUserByPhone',
        input: ({ context }) => ({ phone: context.pendingPhone!, account: accountOf(context) }),
        onDone: [
          { guard: 'phoneTakenByOther', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_taken' } } },
          { target: 'savingProfile' },
        ],
      },
    },

    // Registration, shared by both new-user journeys
    registeringUser: {
      invoke: {
        id: 'registerUser',
        src: 'registerUser',
        input: ({ context }) => {
          const request = requestOf(context, 'REGISTER');
          return {
            email: context.email!,
            ...(request?.consents ? { consents: request.consents } : {}),
            ...(request?.is_magic_link_sent !== undefined ? { is_magic_link_sent: request.is_magic_link_sent } : {}),
          };
        },
        onDone: { target: 'confirmingDoi', actions: 'adoptRegisteredUid' },
      },
    },
    confirmingDoi: {
      description: 'The email was verified by code: its double opt-in is confirmed.',
      tags: [stepTag(STEP.doiConfirmed)],
      invoke: {
        id: 'confirmDoi',
        src: 'confirmDoi',
        input: ({ context }) => ({ uid: context.uid! }),
        onDone: { target: 'savingProfile' },
      },
    },
    savingProfile: {
      always: [{ guard: 'hasIdentityFields', target: 'savingIdentity' }, { guard: 'hasCustomFields', target: 'savingCustomFields' }, { target: 'issuingToken' }],
    },
    savingIdentity: {
      tags: [stepTag(STEP.identitySaved)],
      invoke: {
        id: 'updateProfile',
        src: 'updateProfile',
        input: ({ context }) => ({ uid: context.uid!, step: 40 as const, fields: profileFields(context, 40) }),
        onDone: [
          { guard: 'saveRefused', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_taken' } } },
          { guard: 'hasCustomFields', target: 'savingCustomFields' },
          { target: 'issuingToken' },
        ],
      },
    },
    savingCustomFields: {
      tags: [stepTag(STEP.customFieldsSaved)],
      invoke: {
        id: 'updateProfile',
        src: 'updateProfile',
        input: ({ context }) => ({ uid: context.uid!, step: 42 as const, fields: profileFields(context, 42) }),
        onDone: [
          { guard: 'saveRefused', target: 'refused', actions: { type: 'refuse', params: { reason: 'phone_taken' } } },
          { target: 'issuingToken', actions: 'adoptSavedPhone' },
        ],
      },
    },

    // Every completed login
    issuingToken: {
      invoke: {
        id: 'issueToken',
        src: 'issueToken',
        input: ({ context }) => ({ uid: context.uid!, stay_logged_in: context.stayLoggedIn }),
        onDone: { target: 'ingestingLogin', actions: 'keepToken' },
      },
    },
    ingestingLogin: {
      description: 'Queues {uid, accessToken} for the user collector; its failure never fails the login.',
      invoke: {
        id: 'ingestLogin',
        src: 'ingestLogin',
        input: ({ context }) => ({ uid: context.uid!, accessToken: context.accessToken! }),
        onDone: { target: 'loggedIn' },
        onError: { target: 'loggedIn' },
      },
    },
    loggedIn: {
      tags: [stepTag(STEP.loggedIn), SETTLED],
      meta: { proof: { field: 'proof', kind: 'verified', carries: ['uid', 'email', 'phone'] } },
      on: {
        ADD_PHONE: admitted('checkingNewPhone', { needs: ['account'] }),
        UPDATE_PROFILE: admitted('reviewingProfile', { needs: ['uid'] }),
      },
    },

    refused: {
      description: 'The request is refused: `failure` says why; nothing else happened.',
      type: 'final',
      tags: [FAILED, SETTLED],
    },
  },
});

export type LoginFlowMachine = typeof loginFlowMachine;

/**
 * The machine with effects given as plain async functions (src/ wires the OTP service and the
 * identity client here; tests give fakes). Effects left out keep throwing "not provided". Each
 * effect also receives the request's actor system (runStep's `attach` names it to its caller).
 */
export function provideEffects(effects: Partial<FlowEffects>): LoginFlowMachine {
  const actors: Record<string, unknown> = {};
  for (const [name, effect] of Object.entries(effects) as Array<[EffectName, (input: unknown, signal: AbortSignal, system: object) => Promise<unknown>]>) {
    actors[name] = fromPromise(({ input, signal, system }) => effect(input, signal, system));
  }
  return loginFlowMachine.provide({ actors: actors as Parameters<LoginFlowMachine['provide']>[0]['actors'] });
}
