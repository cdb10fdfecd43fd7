import type { ActionName, Client, DataOf, Envelope, RequestOf } from './client.js';
import { signalUnknownCredential, webAuthnLoader, type WebAuthnSource } from './passkeys.js';

/*
 * The login journey over the Fe* actions, as docs/flows-http.md describes it: every answer hands
 * out the `flow` to send back, the `next_step` to show and, at some steps, a proof for the next
 * request. The journey keeps them, with the identifiers the user gave, and fills them into each
 * request, so a page only sends what the user typed. Fields given explicitly win over the ones
 * carried. A refusal changes nothing: the user retries from the same step.
 */

export const PROOF_FIELDS = ['phone_proof', 'pending_proof', 'register_proof', 'proof'] as const;
export type ProofField = (typeof PROOF_FIELDS)[number];

export type Flow = RequestOf<'FeVerifyOtp'>['flow'];

/** One of the contract's steps, as `next_step` carries it (docs/contract.md#steps). */
export type Step = DataOf<'FeLogin'>['next_step'];

/** The flows FeAddPhone accepts; after any other it is called without one. */
const ADD_PHONE_FLOWS: readonly string[] = ['email_add_phone', 'email_register_phone'];

export interface JourneyState {
  /** The step the latest answer asked to show (`next_step`), null before the first. */
  step: Step | null;
  flow: Flow | null;
  /** At 62 and 90 only. */
  screen: string | null;
  done: boolean;
  uid: string | null;
  /** The email and the phone of the journey: from FeLogin's identifier, FeRegister, FeAddPhone. */
  email: string | null;
  phone: string | null;
  /** At 65: the phone on file the code went to, masked (the user did not type it). */
  phoneHint: string | null;
  proofs: Partial<Record<ProofField, string>>;
}

type FlowAction = 'FeLogin' | 'FeVerifyOtp' | 'FeRegister' | 'FeAddPhone' | 'FeUpdateProfile';
/** A request with the fields the journey carries made optional. */
type Carried<A extends ActionName, K extends keyof RequestOf<A>> = Omit<RequestOf<A>, K> &
  Partial<Pick<RequestOf<A>, K>>;

export type VerifyOtpInput = Carried<'FeVerifyOtp', 'flow'>;
export type RegisterInput = Carried<'FeRegister', 'email'>;
export type AddPhoneInput = RequestOf<'FeAddPhone'> extends infer R ? Omit<R, 'proof'> & { proof?: string } : never;
export type UpdateProfileInput = Carried<'FeUpdateProfile', 'uid' | 'proof'>;

export interface JourneyOptions {
  /**
   * @simplewebauthn/browser, for the passkey methods: its module (or its two functions), or a
   * function that loads it. By default the package is imported on the first passkey ceremony.
   */
  webauthn?: WebAuthnSource;
}

export interface LoginWithPasskeyInput {
  /**
   * Conditional UI: the browser offers the passkey from the autofill of the identifier field
   * (`autocomplete="username webauthn"`) and the promise waits until the person picks one. Start
   * it when the page loads; any other ceremony started meanwhile cancels it (AbortError).
   */
  autofill?: boolean;
  stay_logged_in?: boolean;
}

export interface EnrolPasskeyInput {
  /** What the person calls it; the service names it `Passkey` when not given. */
  name?: string;
}

export interface Journey {
  readonly state: Readonly<JourneyState>;
  /**
   * Step 13 or 32. Answered `challenge_required` (see `challengeOf`), call it again with the same
   * body and `challenge` set to the solution; so for `register` and `addPhone`.
   */
  login(body: RequestOf<'FeLogin'>): Promise<Envelope<'FeLogin'>>;
  verifyOtp(body: VerifyOtpInput): Promise<Envelope<'FeVerifyOtp'>>;
  register(body: RegisterInput): Promise<Envelope<'FeRegister'>>;
  addPhone(body: AddPhoneInput): Promise<Envelope<'FeAddPhone'>>;
  updateProfile(body: UpdateProfileInput): Promise<Envelope<'FeUpdateProfile'>>;
  /** Step 60: the `login` primitive with the journey's email; its `proof` opens FeAddPhone and FeUpdateProfile. After wrong passwords it may answer `challenge_required`: call it again with the solution. */
  password(password: string, challenge?: string): Promise<Envelope<'login'>>;
  /**
   * Step 65, "not my phone": the phone on file stays dropped from the account and the answer
   * asks for the user's own phone (61).
   */
  declinePhone(): Promise<Envelope<'FeVerifyOtp'>>;
  /**
   * Repeats the request that sent the current step's code (a new code once the cooldown is over).
   * Step 65 has none: its code went out with the email proof, which is spent; "not my phone"
   * or a new email login are the ways on. Answered `challenge_required`, call it again with the solution.
   */
  resend(challenge?: string): Promise<Envelope<'FeLogin' | 'FeRegister' | 'FeAddPhone'>>;
  /**
   * After 90: a passkey for the account the journey logged in to, with the proof that login
   * answered (PasskeyEnrolOptions, the browser's `startRegistration`, PasskeyEnrol). Throws
   * what `startRegistration` throws when the browser makes none (the person cancelled:
   * NotAllowedError), and an Error before any request when the journey has no proof.
   */
  enrolPasskey(input?: EnrolPasskeyInput): Promise<Envelope<'PasskeyEnrolOptions' | 'PasskeyEnrol'>>;
  /**
   * A login by passkey (PasskeyLoginOptions, the browser's `startAuthentication`,
   * PasskeyLogin): answered as a code login at 90, the journey starts afresh at 90 with its uid
   * and proof. Answered `passkey_unknown`, the browser is told (signalUnknownCredential, where it
   * exists) so it stops offering that passkey. Throws what `startAuthentication` throws when the
   * browser gives no credential (cancelled, or aborted by another ceremony).
   */
  loginWithPasskey(input?: LoginWithPasskeyInput): Promise<Envelope<'PasskeyLoginOptions' | 'PasskeyLogin'>>;
  /** Forgets everything: a new journey. */
  reset(): void;
}

const initial = (): JourneyState => ({
  step: null,
  flow: null,
  screen: null,
  done: false,
  uid: null,
  email: null,
  phone: null,
  phoneHint: null,
  proofs: {},
});

/** The steps whose answer hands out the `pending_proof` the next FeVerifyOtp presents. */
const PENDING_STEPS: readonly Step[] = [23, 62, 65];

/** A request as `resend` repeats it: a bot challenge's solution is good for one send, so it is not sent again. */
function withoutSolution<T extends { challenge?: unknown }>(body: T): T {
  const { challenge: _spent, ...rest } = body;
  return rest as T;
}

/** Drops absent fields so that what is carried never overrides an explicit value with nothing. */
function defined<T>(body: T): T {
  return Object.fromEntries(
    Object.entries(body as object).filter(([, v]) => v !== undefined && v !== null && v !== ''),
  ) as T;
}

export function createJourney(client: Client, options: JourneyOptions = {}): Journey {
  const webauthn = webAuthnLoader(options.webauthn);
  let state = initial();
  let sender: ((challenge?: string) => Promise<Envelope<'FeLogin' | 'FeRegister' | 'FeAddPhone'>>) | null = null;

  /** Takes what a successful answer hands out; `changes` are the identifiers the request established. */
  function remember<E extends { success: boolean; data?: unknown }>(
    envelope: E,
    changes: Partial<JourneyState> = {},
  ): E {
    if (!envelope.success) return envelope;
    const data = (envelope.data ?? {}) as Record<string, unknown>;
    const proofs = { ...state.proofs };
    for (const field of PROOF_FIELDS) if (typeof data[field] === 'string') proofs[field] = data[field];
    state = {
      ...state,
      ...changes,
      proofs,
      step: data.next_step !== undefined ? (data.next_step as Step) : state.step,
      flow: typeof data.flow === 'string' ? (data.flow as Flow) : state.flow,
      screen: typeof data.screen === 'string' ? data.screen : data.next_step !== undefined ? null : state.screen,
      done: data.done === true || (data.next_step !== undefined ? false : state.done),
      uid: typeof data.uid === 'string' ? data.uid : state.uid,
      phoneHint:
        typeof data.phone_hint === 'string' ? data.phone_hint : data.next_step !== undefined ? null : state.phoneHint,
    };
    if (state.step === 65) sender = null;
    return envelope;
  }

  const send = <A extends FlowAction>(action: A, body: RequestOf<A>) => client.call(action, defined(body));

  const journey: Journey = {
    get state() {
      return state;
    },

    async login(body) {
      const envelope = await send('FeLogin', body);
      if (!envelope.success) return envelope;
      state = initial();
      sender = (challenge) => journey.login({ ...withoutSolution(body), challenge });
      // A phone is answered with 14 (an SMS code); an email with 33 or 60.
      return remember(
        envelope,
        envelope.data.next_step === 14 ? { phone: body.identifier } : { email: body.identifier },
      );
    },

    async verifyOtp(body) {
      const step = state.step;
      const carried = {
        flow: state.flow ?? undefined,
        // The code was sent to the journey's phone at 14 and 62, to its email at 33 and 23, to the phone on file at 65 (its proof names it).
        phone: step === 33 ? undefined : state.phone,
        email: step === 14 ? undefined : state.email,
        uid: step === 62 ? state.uid : undefined,
        pending_proof: step !== null && PENDING_STEPS.includes(step) ? state.proofs.pending_proof : undefined,
      };
      return remember(await send('FeVerifyOtp', { ...defined(carried), ...defined(body) } as RequestOf<'FeVerifyOtp'>));
    },

    async declinePhone() {
      if (state.step !== 65) throw new Error('declinePhone: only at step 65');
      return remember(
        await send('FeVerifyOtp', {
          flow: 'email_phone_declined',
          pending_proof: state.proofs.pending_proof,
        } as RequestOf<'FeVerifyOtp'>),
      );
    },

    async register(body) {
      const step = state.step;
      const carried =
        body.phase === 'email_otp'
          ? // At 24 the phone is verified: the email code goes with its phone_proof (a phone-first registration).
            step === 24
            ? { email: state.email, phone: state.phone, flow: state.flow, phone_proof: state.proofs.phone_proof }
            : { email: state.email }
          : {
              email: state.email,
              phone: step === 25 ? state.phone : undefined,
              flow: state.flow,
              register_proof: state.proofs.register_proof,
            };
      const request = { ...defined(carried), ...defined(body) } as RequestOf<'FeRegister'>;
      const envelope = await send('FeRegister', request);
      if (envelope.success && request.phase === 'email_otp')
        sender = (challenge) => journey.register({ ...withoutSolution(body), challenge });
      return remember(envelope, envelope.success ? { email: request.email } : {});
    },

    async addPhone(body) {
      const carried = {
        uid: state.uid,
        email: state.email,
        flow: state.flow !== null && ADD_PHONE_FLOWS.includes(state.flow) ? state.flow : undefined,
        proof: state.proofs.proof,
      };
      const request = { ...defined(carried), ...defined(body) } as RequestOf<'FeAddPhone'>;
      const envelope = await send('FeAddPhone', request);
      if (envelope.success) sender = (challenge) => journey.addPhone({ ...withoutSolution(body), challenge });
      return remember(envelope, envelope.success ? { phone: request.phone } : {});
    },

    async updateProfile(body) {
      const carried = { uid: state.uid, proof: state.proofs.proof };
      return remember(
        await send('FeUpdateProfile', { ...defined(carried), ...defined(body) } as RequestOf<'FeUpdateProfile'>),
      );
    },

    async password(password, challenge) {
      const envelope = await client.login(
        defined({ email: state.email ?? '', password, challenge }) as RequestOf<'login'>,
      );
      return remember(envelope);
    },

    async resend(challenge) {
      if (!sender)
        throw new Error(
          state.step === 65
            ? 'step 65 has no resend: decline the phone or log in by email again'
            : 'no code was sent in this journey',
        );
      return sender(challenge);
    },

    async enrolPasskey(input = {}) {
      const proof = state.proofs.proof;
      if (!proof) throw new Error('enrolPasskey: only after a login answered 90 with its proof');
      const asked = await client.PasskeyEnrolOptions({ proof });
      if (!asked.success) return asked;
      const { startRegistration } = await webauthn();
      // The service's options are WebAuthn's JSON as @simplewebauthn/server made them.
      const credential = await startRegistration({ optionsJSON: asked.data.options });
      return client.PasskeyEnrol(
        defined({
          proof,
          passkey_proof: asked.data.passkey_proof,
          credential,
          name: input.name,
        }) as RequestOf<'PasskeyEnrol'>,
      );
    },

    async loginWithPasskey(input = {}) {
      const asked = await client.PasskeyLoginOptions({});
      if (!asked.success) return asked;
      const { startAuthentication } = await webauthn();
      const optionsJSON = asked.data.options;
      const credential = await startAuthentication({ optionsJSON, useBrowserAutofill: input.autofill === true });
      const envelope = await client.PasskeyLogin(
        defined({
          passkey_proof: asked.data.passkey_proof,
          credential,
          stay_logged_in: input.stay_logged_in,
        }) as RequestOf<'PasskeyLogin'>,
      );
      if (!envelope.success) {
        const data = envelope.data as { reason?: string; credential_id?: unknown };
        if (data.reason === 'passkey_unknown')
          await signalUnknownCredential(optionsJSON.rpId, data.credential_id ?? credential.id);
        return envelope;
      }
      state = initial();
      sender = null;
      return remember(envelope);
    },

    reset() {
      state = initial();
      sender = null;
    },
  };
  return journey;
}
