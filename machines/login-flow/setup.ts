import { assign, fromPromise, setup } from 'xstate';
import type {
  ClaimAccountInput,
  ClaimAccountOutput,
  ConfirmDoiInput,
  ConfirmDoiOutput,
  EnrolPasskeyInput,
  EnrolPasskeyOutput,
  IngestLoginInput,
  IssueTokenInput,
  IssueTokenOutput,
  LookupUserByEmailInput,
  LookupUserByEmailOutput,
  PasskeyEnrolOptionsInput,
  PasskeyEnrolOptionsOutput,
  RegisterUserInput,
  ReleasePhoneInput,
  ReleasePhoneOutput,
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
  VerifyPasskeyInput,
  VerifyPasskeyOutput,
} from '../effects';
import { STEP, type Flow } from '../steps';
import {
  admit,
  E164,
  EMAIL,
  hasFields,
  present,
  profileFields,
  requestOf,
  type AdmitParams,
  type LoginFlowContext,
  type LoginFlowEvent,
  type LoginFlowInput,
  type LoginFlowStateMeta,
} from './context';
import type { CodeRefusal, NamedRefusal } from './refusals';

/*
 * What the login machine is made of, before any state: its types, the effects it invokes (each
 * throws until src/ provides it), and the guards and actions the journeys name. The journeys
 * (machines/login-flow/*.ts) are state configs of this setup (`createStateConfig`), so every
 * guard, action and effect a journey names is checked against these.
 */

const notProvided = <I, O>(name: string) =>
  fromPromise<O, I>(async () => {
    throw new Error(`login flow: effect "${name}" is not provided (machine.provide({ actors }))`);
  });

export const loginFlow = setup({
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
    claimAccount: notProvided<ClaimAccountInput, ClaimAccountOutput>('claimAccount'),
    releasePhone: notProvided<ReleasePhoneInput, ReleasePhoneOutput>('releasePhone'),
    registerUser: notProvided<RegisterUserInput, RegisterUserOutput>('registerUser'),
    confirmDoi: notProvided<ConfirmDoiInput, ConfirmDoiOutput>('confirmDoi'),
    updateProfile: notProvided<UpdateProfileInput, UpdateProfileOutput>('updateProfile'),
    issueToken: notProvided<IssueTokenInput, IssueTokenOutput>('issueToken'),
    ingestLogin: notProvided<IngestLoginInput, void>('ingestLogin'),
    verifyPasskey: notProvided<VerifyPasskeyInput, VerifyPasskeyOutput>('verifyPasskey'),
    passkeyEnrolOptions: notProvided<PasskeyEnrolOptionsInput, PasskeyEnrolOptionsOutput>('passkeyEnrolOptions'),
    enrolPasskey: notProvided<EnrolPasskeyInput, EnrolPasskeyOutput>('enrolPasskey'),
  },
  guards: {
    requestAccepted: ({ context, event }, params: AdmitParams) => admit(context, event, params).ok,
    wantsPassword: ({ event }) =>
      event.type === 'LOGIN' && event.method === 'password' && EMAIL.test(event.identifier.trim()),
    identifierIsPhone: ({ event }) => event.type === 'LOGIN' && E164.test(event.identifier.trim()),
    identifierIsEmail: ({ event }) => event.type === 'LOGIN' && EMAIL.test(event.identifier.trim()),
    codeAccepted: (_, outcome: VerifyOtpOutput) => outcome === 'ok',
    userFound: (_, user: UserLookupOutput) => user.found,
    userFoundWithPhone: (_, user: UserLookupOutput) => user.found && present(user.phone),
    knowsPhone: ({ context }) => present(context.phone),
    emailUnconfirmed: ({ context }) => context.emailUnconfirmed === true,
    phoneHeld: ({ context }) => context.phoneHeld === true,
    phoneWasDropped: (_, claim: ClaimAccountOutput) => claim.heldPhone !== null,
    phoneOnHold: (_, holder: UserLookupOutput) => !holder.found && holder.onHold === true,
    declinesPhone: ({ context }) => context.flow === 'email_phone_declined',
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
      return E164.test(identifier)
        ? { request: event, phone: identifier }
        : { request: event, email: identifier.toLowerCase() };
    }),
    /** A login by passkey: no identifier typed; unlike a code login it stays logged in only when asked (as PasskeyLogin always did). */
    acceptPasskeyLogin: assign(({ event }) => ({
      request: event,
      method: 'passkey' as const,
      stayLoggedIn: event.type === 'PASSKEY_LOGIN' && event.stay_logged_in === true,
    })),
    /** The account the passkey proved. */
    adoptPasskeyAccount: assign((_, verified: VerifyPasskeyOutput) => ({ uid: verified.uid })),
    /** An enrolment's options or its passkey: what the action answers, untouched by the machine. */
    keepCeremony: assign((_, ceremony: PasskeyEnrolOptionsOutput | EnrolPasskeyOutput) => ({ ceremony })),
    setFlow: assign((_, params: { flow: Flow }) => ({ flow: params.flow })),
    keepOtp: assign((_, otp: SendOtpOutput) => ({ otp })),
    /** The phone a code just went to is the one this journey verifies next. */
    keepNewPhone: assign(({ context }) => ({
      phone: requestOf(context, 'ADD_PHONE')!.phone,
      flow: context.flow ?? 'email_add_phone',
    })),
    /** The holder of the phone just verified. */
    adoptUser: assign(({ context }, user: UserLookupOutput) =>
      user.found
        ? { uid: user.uid, email: user.email?.toLowerCase() ?? context.email, phone: user.phone ?? context.phone }
        : {},
    ),
    /** The account of the email just verified: its phone on file is the account's, whatever the request said. */
    adoptAccount: assign(({ context }, user: UserLookupOutput) =>
      user.found
        ? {
            uid: user.uid,
            email: user.email?.toLowerCase() ?? context.email,
            phone: user.phone,
            emailUnconfirmed: user.emailUnconfirmed === true,
            phoneHeld: user.phoneHeld === true,
          }
        : {},
    ),
    /** The phone a claim dropped and holds: the one step 65 sends its code to. */
    adoptHeldPhone: assign((_, claim: ClaimAccountOutput) => ({
      phone: claim.heldPhone ?? undefined,
      emailUnconfirmed: false,
      phoneHeld: claim.heldPhone !== null,
    })),
    forgetPhone: assign({ phone: undefined, phoneHeld: false }),
    adoptSavedPhone: assign(({ context }) => (context.pendingPhone ? { phone: context.pendingPhone } : {})),
    /** The verified phone of this journey becomes the one to save. */
    savePhoneLater: assign(({ context }) => ({ pendingPhone: context.phone })),
    keepProfilePhone: assign(({ context }) => ({ pendingPhone: requestOf(context, 'UPDATE_PROFILE')?.otp_phone })),
    adoptRegisteredUid: assign((_, registered: RegisterUserOutput) => ({ uid: registered.uid })),
    keepToken: assign((_, token: IssueTokenOutput) => ({
      accessToken: token.access_token,
      expiresIn: token.expires_in ?? null,
    })),
    refuse: assign((_, params: { reason: NamedRefusal; data?: Record<string, unknown> }) => ({ failure: params })),
    refuseRequest: assign(({ context, event }, params: AdmitParams) => {
      const admission = admit(context, event, params);
      return {
        request: event,
        failure: {
          reason: admission.reason ?? 'invalid_request',
          data: admission.field ? { field: admission.field } : {},
        },
      };
    }),
    refuseCode: assign((_, outcome: VerifyOtpOutput) => ({
      failure: { reason: outcome as CodeRefusal, data: { valid: false } },
    })),
  },
});
