import { assign, fromPromise, setup, type SnapshotFrom } from 'xstate';
import type {
  ConfirmDoiInput,
  ConfirmDoiOutput,
  EffectName,
  FlowEffects,
  IngestLoginInput,
  IssueTokenInput,
  IssueTokenOutput,
  LookupUserByEmailInput,
  LookupUserByEmailOutput,
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
import { FAILED, SETTLED, STEP, stepTag, type Flow } from './steps';
import { accountOf, E164, EMAIL, hasFields, output, present, profileFields, requestOf, admit, initialContext, type AdmitParams, type FlowFailure, type LoginFlowContext, type LoginFlowEvent, type LoginFlowInput, type LoginFlowStateMeta } from './login-flow.context';
import { admitted, codeStep, flowIs, refuse } from './code-step';

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

export * from './login-flow.context';

const notProvided = <I, O>(name: string) =>
  fromPromise<O, I>(async () => {
    throw new Error(`login flow: effect "${name}" is not provided (machine.provide({ actors }))`);
  });

/* The code steps of the journeys, built before the machine so that their state names are part of its type. */
const phoneLoginCode = codeStep({
  sending: 'sendingSmsCode',
  awaiting: 'awaitingPhoneCode',
  verifying: 'verifyingPhoneCode',
  to: 'phone',
  reachable: true,
  sendingTags: [stepTag(STEP.smsCodeSent)],
  awaitingTags: [stepTag(STEP.enterPhoneCode), SETTLED],
  admit: { needs: ['phone', 'code'], takes: ['phone'] },
  accepted: { target: 'findingUserByPhone' },
});
const emailLoginCode = codeStep({
  sending: 'sendingEmailCode',
  awaiting: 'awaitingEmailCode',
  verifying: 'verifyingEmailCode',
  to: 'email',
  reachable: true,
  sendingTags: [stepTag(STEP.emailCodeSent)],
  awaitingTags: [stepTag(STEP.enterEmailCode), SETTLED],
  admit: { needs: ['email', 'code'], takes: ['email'] },
  verifyingTags: [stepTag(STEP.emailVerification)],
  accepted: { target: 'lookingUpUser' },
});
const registrationEmailCode = codeStep({
  sending: 'sendingRegistrationEmailCode',
  awaiting: 'awaitingRegistrationEmailCode',
  verifying: 'verifyingRegistrationEmailCode',
  to: 'email',
  awaitingTags: [stepTag(STEP.enterRegistrationEmailCode), SETTLED],
  awaitingMeta: { proof: { field: 'pending_proof', carries: ['phone', 'email'] } },
  admit: { needs: ['email', 'code'] },
  verifyingDescription: 'The registration email code, checked against the pending proof.',
  verifyingTags: [stepTag(STEP.enterRegistrationEmail)],
  accepted: { target: 'checkingRegistrationEmail' },
});
const newPhoneCode = codeStep({
  sending: 'sendingNewPhoneCode',
  awaiting: 'awaitingNewPhoneCode',
  verifying: 'verifyingNewPhoneCode',
  to: 'newPhone',
  awaitingTags: [stepTag(STEP.enterNewPhoneCode), SETTLED],
  awaitingMeta: { proof: { field: 'pending_proof', carries: ['uid', 'email', 'phone'] } },
  admit: { needs: ['phone', 'code'] },
  accepted: { target: 'recheckingNewPhone', actions: 'savePhoneLater' },
});

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
        ...phoneLoginCode,
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
        ...emailLoginCode,
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
        ...registrationEmailCode,
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
        ...newPhoneCode,
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
