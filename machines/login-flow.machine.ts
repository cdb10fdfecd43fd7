import { assign, fromPromise, setup, type SnapshotFrom } from 'xstate';
import type { ACTIONS, Entry, Phase } from './actions';
import type {
  ConfirmDoiInput,
  ConfirmDoiOutput,
  EffectName,
  FlowClaims,
  FlowEffects,
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
import { FAILED, SETTLED, STEP, stepTag, type Flow, type ProfileStep } from './steps';

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
 * compound states; the states every completed login shares (token, ingest, `loggedIn`) and the
 * refusal are top-level. State keys are unique across the machine (the diagrams, the demo page
 * and the resume table name states by key): a transition that leaves its journey targets the
 * state by id, and every state entered from outside its journey has `id` equal to its key.
 *
 * Context is plain JSON. The identifiers in it (`uid`, `email`, `phone`) are only ever values
 * the proof vouched for, values a code was verified for, or facts of the account found; a
 * value merely typed by the caller is compared with them, never adopted, unless the state is
 * about to verify it by code (`takes`) or the caller is trusted (x-internal-key).
 */

export type { Entry, Phase } from './actions';

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
  type: typeof ACTIONS.FeLogin.event;
  /** E.164 phone or email. */
  identifier: string;
  /** `password` asks for the password path (email only). */
  method?: 'otp' | 'password';
}
export interface VerifyOtpEvent {
  type: typeof ACTIONS.FeVerifyOtp.event;
  otp_code: string;
  flow?: Flow;
  phone?: string;
  email?: string;
  uid?: string;
  stay_logged_in?: boolean;
}
export interface RegisterEvent {
  type: typeof ACTIONS.FeRegister.event;
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
  type: typeof ACTIONS.FeAddPhone.event;
  /** The phone to add, E.164. */
  phone: string;
  uid?: string;
  email?: string;
  flow?: Flow;
}
export interface UpdateProfileEvent {
  type: typeof ACTIONS.FeUpdateProfile.event;
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

/** State meta: the proof the answer hands out when the request settles there (its kind is `PROOF_KIND[field]`). */
export interface LoginFlowStateMeta {
  proof?: { field: ProofField; carries: Array<'uid' | 'email' | 'phone'> };
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

/** The initial context of a request: who calls, with which proof, on which flow. */
export function initialContext(input: LoginFlowInput): LoginFlowContext {
  return {
    entry: input.entry,
    trusted: input.trusted === true,
    claims: input.claims ?? null,
    flow: input.flow ?? (input.claims?.flow as Flow | undefined) ?? null,
    phase: input.phase ?? null,
    request: null,
    stayLoggedIn: true,
  };
}

/** The identifiers of a proof that resumed the journey: what the request may act on. */
export function proofIdentifiers(claims: FlowClaims | null): Partial<Record<Identifier, string>> {
  if (!claims) return {};
  return {
    ...(claims.uid ? { uid: claims.uid } : {}),
    ...(claims.email ? { email: claims.email.toLowerCase() } : {}),
    ...(claims.phone ? { phone: claims.phone } : {}),
  };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const E164 = /^\+[1-9]\d{5,14}$/;
/** Dynamic params of a guard or action after an effect: its output, typed by the actor `setup()` declares for it. */
const output = <T>({ event }: { event: { output: T } }): T => event.output;
const requestOf = <T extends LoginFlowEvent['type']>(context: LoginFlowContext, type: T) =>
  (context.request?.type === type ? context.request : undefined) as Extract<LoginFlowEvent, { type: T }> | undefined;

/** Fields of step 40 (identity) and step 42 (custom) the request asks to save. */
export function profileFields(context: LoginFlowContext, step: ProfileStep): ProfileFields {
  const request = context.request;
  const form = request?.type === 'REGISTER' || request?.type === 'UPDATE_PROFILE' ? request : undefined;
  const pick = (source: Record<string, unknown> | undefined, keys: Array<keyof ProfileFields>): ProfileFields => {
    const fields: ProfileFields = {};
    for (const key of keys) if (source && present(source[key])) fields[key] = (source[key] as string).trim();
    return fields;
  };
  if (step === STEP.identitySaved) {
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
  { target: '#refused', actions: [{ type: 'refuseRequest' as const, params }] },
];
const flowIs = (flow: Flow) => ({ type: 'setFlow' as const, params: { flow } });
const refuse = (reason: FlowFailureReason, data?: Record<string, unknown>) => ({ type: 'refuse' as const, params: { reason, ...(data ? { data } : {}) } });

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
    requestAccepted: ({ context, event }, params: AdmitParams) => admit(context, event, params).ok,
    wantsPassword: ({ event }) => event.type === 'LOGIN' && event.method === 'password' && EMAIL.test(event.identifier.trim()),
    identifierIsPhone: ({ event }) => event.type === 'LOGIN' && E164.test(event.identifier.trim()),
    identifierIsEmail: ({ event }) => event.type === 'LOGIN' && EMAIL.test(event.identifier.trim()),
    codeAccepted: (_, outcome: VerifyOtpOutput) => outcome === 'ok',
    userFound: (_, user: UserLookupOutput) => user.found,
    userFoundWithPhone: (_, user: UserLookupOutput) => user.found && present(user.phone),
    knowsPhone: ({ context }) => present(context.phone),
    phoneTakenByOther: ({ context }, holder: UserLookupOutput) => holder.found && holder.uid !== context.uid,
    knowsUid: ({ context }) => present(context.uid),
    profilePhoneUnverified: ({ context }) => {
      const request = requestOf(context, 'UPDATE_PROFILE');
      return present(request?.otp_phone) && !context.trusted && request.otp_phone !== context.phone;
    },
    changesPhone: ({ context }) => present(requestOf(context, 'UPDATE_PROFILE')?.otp_phone),
    hasIdentityFields: ({ context }) => hasFields(profileFields(context, STEP.identitySaved)),
    hasCustomFields: ({ context }) => hasFields(profileFields(context, STEP.customFieldsSaved)),
    saveRefused: (_, saved: UpdateProfileOutput) => saved.outcome === 'phone_taken',
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
    setFlow: assign((_, params: { flow: Flow }) => ({ flow: params.flow })),
    keepOtp: assign((_, otp: SendOtpOutput) => ({ otp })),
    /** The phone a code just went to is the one this journey verifies next. */
    keepNewPhone: assign(({ context }) => ({ phone: requestOf(context, 'ADD_PHONE')!.phone, flow: context.flow ?? 'email_add_phone' })),
    /** The holder of the phone just verified. */
    adoptUser: assign(({ context }, user: UserLookupOutput) =>
      user.found ? { uid: user.uid, email: user.email?.toLowerCase() ?? context.email, phone: user.phone ?? context.phone } : {},
    ),
    /** The account of the email just verified: its phone on file is the account's, whatever the request said. */
    adoptAccount: assign(({ context }, user: UserLookupOutput) => (user.found ? { uid: user.uid, email: user.email?.toLowerCase() ?? context.email, phone: user.phone } : {})),
    adoptSavedPhone: assign(({ context }) => (context.pendingPhone ? { phone: context.pendingPhone } : {})),
    /** The verified phone of this journey becomes the one to save. */
    savePhoneLater: assign(({ context }) => ({ pendingPhone: context.phone })),
    keepProfilePhone: assign(({ context }) => ({ pendingPhone: requestOf(context, 'UPDATE_PROFILE')?.otp_phone })),
    adoptRegisteredUid: assign((_, registered: RegisterUserOutput) => ({ uid: registered.uid })),
    keepToken: assign((_, token: IssueTokenOutput) => ({ accessToken: token.access_token, expiresIn: token.expires_in ?? null })),
    refuse: assign((_, params: FlowFailure) => ({ failure: params })),
    refuseRequest: assign(({ context, event }, params: AdmitParams) => {
      const admission = admit(context, event, params);
      return { request: event, failure: { reason: admission.reason ?? 'invalid_request', data: admission.field ? { field: admission.field } : {} } };
    }),
    refuseCode: assign((_, outcome: VerifyOtpOutput) => ({ failure: { reason: outcome as Exclude<VerifyOtpOutput, 'ok'>, data: { valid: false } } })),
  },
}).createMachine({
  id: 'loginFlow',
  context: ({ input }) => initialContext(input),
  // A journey starts at the login screen; a request starts wherever its resume point says (machines/resume.ts).
  initial: 'enteringIdentifier',
  states: {
    enteringIdentifier: {
      description: 'The login screen: phone or email.',
      tags: [SETTLED],
      on: {
        LOGIN: [
          { guard: 'wantsPassword', target: 'askingPassword', actions: ['acceptLogin', flowIs('email')] },
          { guard: 'identifierIsPhone', target: '#sendingSmsCode', actions: ['acceptLogin', flowIs('phone')] },
          { guard: 'identifierIsEmail', target: '#sendingEmailCode', actions: ['acceptLogin', flowIs('email')] },
          { target: 'refused', actions: refuse('invalid_request', { field: 'identifier' }) },
        ],
      },
    },
    askingPassword: { type: 'final', tags: [stepTag(STEP.enterPassword), SETTLED] },

    phoneLogin: {
      description: 'Phone login: the SMS code, then the account that holds the phone.',
      initial: 'sendingSmsCode',
      states: {
        sendingSmsCode: {
          id: 'sendingSmsCode',
          tags: [stepTag(STEP.smsCodeSent)],
          invoke: {
            id: 'sendOtp',
            src: 'sendOtp',
            input: ({ context }) => ({ key: context.phone!, phone: context.phone! }),
            onDone: { target: 'awaitingPhoneCode', actions: { type: 'keepOtp', params: output } },
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
            onDone: [
              { guard: { type: 'codeAccepted', params: output }, target: 'findingUserByPhone' },
              { target: '#refused', actions: { type: 'refuseCode', params: output } },
            ],
          },
        },
        findingUserByPhone: {
          invoke: {
            id: 'searchUserByPhone',
            src: 'searchUserByPhone',
            input: ({ context }) => ({ phone: context.phone! }),
            onDone: [
              { guard: { type: 'userFound', params: output }, target: '#issuingToken', actions: [{ type: 'adoptUser', params: output }, flowIs('phone')] },
              { target: '#askingRegistrationEmail', actions: flowIs('phone_register') },
            ],
          },
        },
      },
    },

    emailLogin: {
      description: 'Email login: the email code, then the account that holds the email and its phone on file.',
      initial: 'sendingEmailCode',
      states: {
        sendingEmailCode: {
          id: 'sendingEmailCode',
          tags: [stepTag(STEP.emailCodeSent)],
          invoke: {
            id: 'sendOtp',
            src: 'sendOtp',
            input: ({ context }) => ({ key: context.email!, email: context.email! }),
            onDone: { target: 'awaitingEmailCode', actions: { type: 'keepOtp', params: output } },
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
            onDone: [
              { guard: { type: 'codeAccepted', params: output }, target: 'lookingUpUser' },
              { target: '#refused', actions: { type: 'refuseCode', params: output } },
            ],
          },
        },
        lookingUpUser: {
          tags: [stepTag(STEP.userLookup)],
          invoke: {
            id: 'lookupUserByEmail',
            src: 'lookupUserByEmail',
            input: ({ context }) => ({ email: context.email! }),
            onDone: [
              { guard: { type: 'userFound', params: output }, target: 'checkingPhoneOnFile', actions: { type: 'adoptAccount', params: output } },
              { target: '#fillingEmailRegistrationForm', actions: flowIs('email_register') },
            ],
          },
        },
        checkingPhoneOnFile: {
          tags: [stepTag(STEP.accountFound)],
          always: [
            { guard: 'knowsPhone', target: 'welcomingBack', actions: flowIs('email_with_phone') },
            { target: '#askingPhone', actions: flowIs('email_add_phone') },
          ],
        },
        welcomingBack: {
          tags: [stepTag(STEP.knownUserWithPhone)],
          always: { target: '#issuingToken' },
        },
      },
    },

    registration: {
      description: 'Registration: the email verified by code (after a verified phone, or from scratch), the form, the new account and its double opt-in.',
      initial: 'enteringRegistrationEmail',
      states: {
        enteringRegistrationEmail: {
          description: 'Email registration without a verified phone: the email to send the code to.',
          tags: [SETTLED],
          on: {
            REGISTER: admitted('sendingRegistrationEmailCode', { needs: ['email'], takes: ['email'] }, [flowIs('email_register')]),
          },
        },
        askingRegistrationEmail: {
          id: 'askingRegistrationEmail',
          tags: [stepTag(STEP.enterRegistrationEmail), SETTLED],
          meta: { proof: { field: 'phone_proof', carries: ['phone'] } },
          on: { REGISTER: admitted('sendingRegistrationEmailCode', { needs: ['phone', 'email'], takes: ['email'] }) },
        },
        sendingRegistrationEmailCode: {
          invoke: {
            id: 'sendOtp',
            src: 'sendOtp',
            input: ({ context }) => ({ key: context.email!, email: context.email! }),
            onDone: { target: 'awaitingRegistrationEmailCode', actions: { type: 'keepOtp', params: output } },
          },
        },
        awaitingRegistrationEmailCode: {
          tags: [stepTag(STEP.enterRegistrationEmailCode), SETTLED],
          meta: { proof: { field: 'pending_proof', carries: ['phone', 'email'] } },
          on: { VERIFY_OTP: admitted('verifyingRegistrationEmailCode', { needs: ['email', 'code'] }) },
        },
        verifyingRegistrationEmailCode: {
          description: 'The registration email code, checked against the pending proof.',
          tags: [stepTag(STEP.enterRegistrationEmail)],
          invoke: {
            id: 'verifyOtp',
            src: 'verifyOtp',
            input: ({ context }) => ({ key: context.email!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
            onDone: [
              { guard: { type: 'codeAccepted', params: output }, target: 'checkingRegistrationEmail' },
              { target: '#refused', actions: { type: 'refuseCode', params: output } },
            ],
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
              { guard: { type: 'userFoundWithPhone', params: output }, target: 'confirmingDoi', actions: { type: 'adoptAccount', params: output } },
              { guard: { type: 'userFound', params: output }, target: 'confirmingDoi', actions: ['savePhoneLater', { type: 'adoptAccount', params: output }] },
              { guard: 'knowsPhone', target: 'issuingRegisterProof', actions: flowIs('phone_register') },
              { target: 'fillingEmailRegistrationForm', actions: flowIs('email_register') },
            ],
          },
        },
        issuingRegisterProof: {
          tags: [stepTag(STEP.registerProofIssued)],
          always: { target: 'fillingPhoneRegistrationForm' },
        },
        fillingPhoneRegistrationForm: {
          tags: [stepTag(STEP.registrationForm), SETTLED],
          meta: { proof: { field: 'register_proof', carries: ['phone', 'email'] } },
          on: { REGISTER: admitted('checkingRegistrationPhone', { needs: ['phone', 'email'] }, [{ type: 'savePhoneLater' }]) },
        },
        checkingRegistrationPhone: {
          invoke: {
            id: 'searchUserByPhone',
            src: 'searchUserByPhone',
            input: ({ context }) => ({ phone: context.pendingPhone!, account: accountOf(context) }),
            onDone: [
              { guard: { type: 'phoneTakenByOther', params: output }, target: '#refused', actions: refuse('phone_taken') },
              { target: 'registeringUser' },
            ],
          },
        },
        fillingEmailRegistrationForm: {
          id: 'fillingEmailRegistrationForm',
          tags: [stepTag(STEP.newUserForm), SETTLED],
          meta: { proof: { field: 'register_proof', carries: ['email'] } },
          on: { REGISTER: admitted('registeringUser', { needs: ['email'] }, [flowIs('email_register_phone')]) },
        },
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
            onDone: { target: 'confirmingDoi', actions: { type: 'adoptRegisteredUid', params: output } },
          },
        },
        confirmingDoi: {
          description: 'The email was verified by code: its double opt-in is confirmed.',
          tags: [stepTag(STEP.doiConfirmed)],
          invoke: {
            id: 'confirmDoi',
            src: 'confirmDoi',
            input: ({ context }) => ({ uid: context.uid! }),
            onDone: { target: '#savingProfile' },
          },
        },
      },
    },

    addingPhone: {
      description: 'Adding a phone (an account without one, or a logged-in user): free for this account, then its SMS code.',
      initial: 'askingPhone',
      states: {
        askingPhone: {
          id: 'askingPhone',
          tags: [stepTag(STEP.addPhone), SETTLED],
          meta: { proof: { field: 'proof', carries: ['uid', 'email'] } },
          on: { ADD_PHONE: admitted('checkingNewPhone', { needs: ['account'] }) },
        },
        checkingNewPhone: {
          id: 'checkingNewPhone',
          invoke: {
            id: 'searchUserByPhone',
            src: 'searchUserByPhone',
            input: ({ context }) => ({ phone: requestOf(context, 'ADD_PHONE')!.phone, account: accountOf(context) }),
            onDone: [
              { guard: { type: 'phoneTakenByOther', params: output }, target: '#refused', actions: refuse('phone_taken') },
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
            onDone: { target: 'awaitingNewPhoneCode', actions: [{ type: 'keepOtp', params: output }, 'keepNewPhone'] },
          },
        },
        awaitingNewPhoneCode: {
          tags: [stepTag(STEP.enterNewPhoneCode), SETTLED],
          meta: { proof: { field: 'pending_proof', carries: ['uid', 'email', 'phone'] } },
          on: { VERIFY_OTP: admitted('verifyingNewPhoneCode', { needs: ['phone', 'code'] }) },
        },
        verifyingNewPhoneCode: {
          invoke: {
            id: 'verifyOtp',
            src: 'verifyOtp',
            input: ({ context }) => ({ key: context.phone!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
            onDone: [
              { guard: { type: 'codeAccepted', params: output }, target: 'recheckingNewPhone', actions: 'savePhoneLater' },
              { target: '#refused', actions: { type: 'refuseCode', params: output } },
            ],
          },
        },
        recheckingNewPhone: {
          description: 'The phone may have been taken since the code went out.',
          invoke: {
            id: 'searchUserByPhone',
            src: 'searchUserByPhone',
            input: ({ context }) => ({ phone: context.pendingPhone!, account: accountOf(context) }),
            onDone: [
              { guard: { type: 'phoneTakenByOther', params: output }, target: '#refused', actions: refuse('phone_taken') },
              { guard: 'knowsUid', target: '#savingProfile' },
              { target: '#refused', actions: refuse('invalid_request', { field: 'uid' }) },
            ],
          },
        },
      },
    },

    profile: {
      description: `The profile: a changed phone checked first, then identity (${STEP.identitySaved}) and custom (${STEP.customFieldsSaved}) fields saved.`,
      initial: 'reviewingProfile',
      states: {
        reviewingProfile: {
          id: 'reviewingProfile',
          always: [
            { guard: 'profilePhoneUnverified', target: '#refused', actions: refuse('phone_not_verified', { field: 'otp_phone' }) },
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
              { guard: { type: 'phoneTakenByOther', params: output }, target: '#refused', actions: refuse('phone_taken') },
              { target: 'savingProfile' },
            ],
          },
        },
        savingProfile: {
          id: 'savingProfile',
          always: [{ guard: 'hasIdentityFields', target: 'savingIdentity' }, { guard: 'hasCustomFields', target: 'savingCustomFields' }, { target: '#issuingToken' }],
        },
        savingIdentity: {
          tags: [stepTag(STEP.identitySaved)],
          invoke: {
            id: 'updateProfile',
            src: 'updateProfile',
            input: ({ context }) => ({ uid: context.uid!, step: STEP.identitySaved, fields: profileFields(context, STEP.identitySaved) }),
            onDone: [
              { guard: { type: 'saveRefused', params: output }, target: '#refused', actions: refuse('phone_taken') },
              { guard: 'hasCustomFields', target: 'savingCustomFields' },
              { target: '#issuingToken' },
            ],
          },
        },
        savingCustomFields: {
          tags: [stepTag(STEP.customFieldsSaved)],
          invoke: {
            id: 'updateProfile',
            src: 'updateProfile',
            input: ({ context }) => ({ uid: context.uid!, step: STEP.customFieldsSaved, fields: profileFields(context, STEP.customFieldsSaved) }),
            onDone: [
              { guard: { type: 'saveRefused', params: output }, target: '#refused', actions: refuse('phone_taken') },
              { target: '#issuingToken', actions: 'adoptSavedPhone' },
            ],
          },
        },
      },
    },

    // Every completed login
    issuingToken: {
      id: 'issuingToken',
      invoke: {
        id: 'issueToken',
        src: 'issueToken',
        input: ({ context }) => ({ uid: context.uid!, stay_logged_in: context.stayLoggedIn }),
        onDone: { target: 'ingestingLogin', actions: { type: 'keepToken', params: output } },
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
      meta: { proof: { field: 'proof', carries: ['uid', 'email', 'phone'] } },
      on: {
        ADD_PHONE: admitted('#checkingNewPhone', { needs: ['account'] }),
        UPDATE_PROFILE: admitted('#reviewingProfile', { needs: ['uid'] }),
      },
    },

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
