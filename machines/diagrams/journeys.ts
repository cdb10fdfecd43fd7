import type { FlowClaims, FlowEffects, ProofField } from '../effects';
import { provideEffects } from '../login-flow.machine';
import { ACTION_ENTRY, proofFieldFor, type FeAction } from '../actions';
import { flowRequest } from '../requests';
import { runStep, type StepAnswer } from '../run-step';
import type { StepId } from '../steps';

/*
 * The contract's typical sequences (docs/contract.md#typical-sequences) as journeys of optimised actions, replayed against a small fake
 * world (accounts by uid, email and phone; one valid code). The machine tests replay them and
 * docs/flows.md lists what each request did, so the documented paths are the ones that run.
 */

interface WorldUser {
  uid: string;
  email: string;
  phone?: string;
  /** The email's double opt-in was never confirmed (a phone registrant typed it). */
  unconfirmed?: true;
  /** The id of a passkey the account enrolled: an assertion naming it logs the account in. */
  passkey?: string;
}

export interface FakeWorld {
  users: WorldUser[];
  /** The code every verification accepts; anything else is `invalid`. */
  code: string;
  /** Phones a claim dropped, held for their account (uid -> phone). */
  held?: Record<string, string>;
}

export interface EffectCall {
  name: keyof FlowEffects;
  input: unknown;
}

/** Effects over a fake world, recording every call with its input. */
export function worldEffects(world: FakeWorld, calls: EffectCall[] = []): FlowEffects {
  let registered = 0;
  const record = <I>(name: keyof FlowEffects, input: I) => calls.push({ name, input });
  const held = (world.held ??= {});
  const found = (user: WorldUser | undefined) => {
    if (!user) return { found: false as const };
    const { unconfirmed, ...account } = user;
    const heldPhone = account.phone === undefined ? held[user.uid] : undefined;
    return {
      found: true as const,
      ...account,
      ...(unconfirmed ? { emailUnconfirmed: true as const } : {}),
      ...(heldPhone ? { phone: heldPhone, phoneHeld: true as const } : {}),
    };
  };
  const heldFor = (phone: string) => Object.keys(held).find((uid) => held[uid] === phone);
  return {
    sendOtp: async (input) => {
      record('sendOtp', input);
      return {
        resent: false,
        retry_after: 60,
        cooldown: 60,
        expires_in: 300,
        notified: { sms: input.phone !== undefined, email: input.email !== undefined },
      };
    },
    verifyOtp: async (input) => {
      record('verifyOtp', input);
      return input.code === world.code ? 'ok' : 'invalid';
    },
    searchUserByPhone: async (input) => {
      record('searchUserByPhone', input);
      const holder = world.users.find((u) => u.phone === input.phone);
      if (holder) return { found: true, uid: holder.uid, email: holder.email, phone: holder.phone };
      const uid = heldFor(input.phone);
      if (uid === undefined || uid === input.account) return { found: false };
      return input.account === undefined ? { found: false, onHold: true } : { found: true, uid };
    },
    lookupUserByEmail: async (input) => {
      record('lookupUserByEmail', input);
      return found(world.users.find((u) => u.email === input.email.toLowerCase()));
    },
    claimAccount: async (input) => {
      record('claimAccount', input);
      const user = world.users.find((u) => u.uid === input.uid)!;
      delete user.unconfirmed;
      delete user.phone;
      if (input.phone) held[input.uid] = input.phone;
      return { heldPhone: input.phone ?? null };
    },
    releasePhone: async (input) => {
      record('releasePhone', input);
      delete held[input.uid];
    },
    registerUser: async (input) => {
      record('registerUser', input);
      const user = { uid: `uid-new-${++registered}`, email: input.email };
      world.users.push(user);
      return { uid: user.uid };
    },
    confirmDoi: async (input) => {
      record('confirmDoi', input);
      return { email_confirmation_state: 'confirmed' };
    },
    updateProfile: async (input) => {
      record('updateProfile', input);
      const user = world.users.find((u) => u.uid === input.uid);
      const phone = input.fields.otp_phone;
      if (phone && world.users.some((u) => u.phone === phone && u.uid !== input.uid)) return { outcome: 'phone_taken' };
      if (user && phone) {
        user.phone = phone;
        delete held[input.uid];
      }
      return { outcome: 'saved' };
    },
    issueToken: async (input) => {
      record('issueToken', input);
      return { access_token: `token-for-${input.uid}`, expires_in: 3600 };
    },
    ingestLogin: async (input) => {
      record('ingestLogin', input);
    },
    verifyPasskey: async (input) => {
      record('verifyPasskey', input);
      const id = (input.credential as { id?: unknown } | null)?.id;
      const user = world.users.find((u) => u.passkey !== undefined && u.passkey === id);
      // The real effect throws `passkey_unknown`; the fake world knows only the passkeys its users enrolled.
      if (!user) throw new Error(`fake world: no passkey "${String(id)}"`);
      return { uid: user.uid };
    },
    passkeyEnrolOptions: async (input) => {
      record('passkeyEnrolOptions', input);
      return { options: { challenge: `challenge-for-${input.uid}` }, passkey_proof: 'options-proof' };
    },
    enrolPasskey: async (input) => {
      record('enrolPasskey', input);
      const id = String((input.credential as { id?: unknown } | null)?.id);
      const user = world.users.find((u) => u.uid === input.uid);
      if (!user) throw new Error(`fake world: no account "${input.uid}" to enrol a passkey on`);
      user.passkey = id;
      return { passkey: { id, name: input.name } };
    },
  };
}

interface JourneyRequest {
  action: FeAction;
  /** The request body, phones in E.164; the proof of an earlier answer is attached when the action reads that field. */
  body: Record<string, unknown>;
}

/** The journeys product and QA review, one diagram each (docs/journeys.md, GET /flows); their Italian titles are in labels.ts. */
export const JOURNEY_IDS = [
  'phone-login',
  'phone-registration',
  'email-registration',
  'email-login-with-phone',
  'email-login-unconfirmed-phone',
  'email-login-phone-declined',
  'email-login-add-phone',
  'email-signup',
  'password',
  'passkey-login',
  'passkey-enrol',
] as const;
export type JourneyId = (typeof JOURNEY_IDS)[number];

/** The journeys whose ceremonies need an authenticator answering a fresh challenge each time. */
const PASSKEY_JOURNEY_IDS: readonly JourneyId[] = ['passkey-login', 'passkey-enrol'];

/**
 * The journeys whose examples (docs/journeys/examples.json) replay as written over plain HTTP:
 * every journey but the passkeys', whose login or enrolment needs an authenticator to sign a
 * fresh challenge each time (their examples show the ceremony's fields by what they are).
 */
export const EXAMPLE_JOURNEY_IDS: readonly JourneyId[] = JOURNEY_IDS.filter((id) => !PASSKEY_JOURNEY_IDS.includes(id));

export interface Journey {
  /** Its slug: the diagram's file (docs/journeys/<id>.svg) and anchor. */
  id: JourneyId;
  name: string;
  /** The row of the contract's tables it replays. */
  spec: string;
  users: WorldUser[];
  requests: JourneyRequest[];
}

export interface ReplayedRequest {
  action: FeAction;
  body: Record<string, unknown>;
  proofUsed?: ProofField;
  /** The state the request resumed at, and every state it entered after its event (the last is where it settled). */
  from: string;
  states: string[];
  steps: StepId[];
  calls: EffectCall[];
  answer: StepAnswer;
}

const JOURNEY_CODE = '123456';
const PHONE = '+393331234567';
const NEW_PHONE = '+393339876543';
/** The phones on the two step-65 accounts: the registrant's own, and one typed with someone else's email. */
const ELENA_PHONE = '+393336660606';
const SQUATTER_PHONE = '+393336660707';

/** The contract's typical frontend sequences, as the optimised actions serve them. */
export const journeys: Journey[] = [
  {
    id: 'phone-login',
    name: 'Phone, user exists',
    spec: 'search_user, otp_generate, verify_otp, search_user, access_token',
    users: [{ uid: 'uid-anna', email: 'anna@example.com', phone: PHONE }],
    requests: [
      { action: 'FeLogin', body: { identifier: PHONE } },
      { action: 'FeVerifyOtp', body: { flow: 'phone', phone: PHONE, otp_code: JOURNEY_CODE } },
    ],
  },
  {
    id: 'phone-registration',
    name: 'Phone, new user',
    spec: 'otp_generate, verify_otp, search_user, register, update_profile, access_token',
    users: [],
    requests: [
      { action: 'FeLogin', body: { identifier: PHONE } },
      { action: 'FeVerifyOtp', body: { flow: 'phone', phone: PHONE, otp_code: JOURNEY_CODE } },
      { action: 'FeRegister', body: { phase: 'email_otp', email: 'new@example.com', phone: PHONE, otp: true } },
      {
        action: 'FeVerifyOtp',
        body: { flow: 'phone_register', email: 'new@example.com', phone: PHONE, otp_code: JOURNEY_CODE },
      },
      {
        action: 'FeRegister',
        body: {
          phase: 'register',
          email: 'new@example.com',
          phone: PHONE,
          first_name: 'Nina',
          last_name: 'Neri',
          city: 'Roma',
          birth_date: '1990-01-31',
          consents: { terms_conditions: true },
        },
      },
    ],
  },
  {
    id: 'email-registration',
    name: 'Email not registered',
    spec: 'get_user_email, otp_generate (email), verify_otp, register and doi_confirm, phone OTP, update_profile (phone), update_profile (personal data), access_token',
    users: [],
    requests: [
      { action: 'FeLogin', body: { identifier: 'new@example.com' } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: 'new@example.com', otp_code: JOURNEY_CODE } },
      {
        action: 'FeRegister',
        body: {
          phase: 'register',
          email: 'new@example.com',
          first_name: 'Nina',
          last_name: 'Neri',
          consents: { terms_conditions: true },
        },
      },
      {
        action: 'FeAddPhone',
        body: { flow: 'email_register_phone', phone: NEW_PHONE, uid: 'uid-new-1', email: 'new@example.com' },
      },
      {
        action: 'FeVerifyOtp',
        body: {
          flow: 'email_register_phone',
          phone: NEW_PHONE,
          uid: 'uid-new-1',
          email: 'new@example.com',
          otp_code: JOURNEY_CODE,
        },
      },
      { action: 'FeUpdateProfile', body: { uid: 'uid-new-1', city: 'Milano', birth_date: '1990-01-31' } },
    ],
  },
  {
    id: 'email-login-with-phone',
    name: 'Email with otp_phone',
    spec: 'get_user_email, then the phone path',
    users: [{ uid: 'uid-bruno', email: 'bruno@example.com', phone: PHONE }],
    requests: [
      { action: 'FeLogin', body: { identifier: 'bruno@example.com' } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: 'bruno@example.com', otp_code: JOURNEY_CODE } },
    ],
  },
  {
    id: 'email-login-unconfirmed-phone',
    name: 'Email with otp_phone, email never confirmed: the phone proven',
    spec: 'get_user_email, then the phone path (steps 65/90): a phone registrant signs in by email',
    users: [{ uid: 'uid-elena', email: 'elena@example.com', phone: ELENA_PHONE, unconfirmed: true }],
    requests: [
      { action: 'FeLogin', body: { identifier: 'elena@example.com' } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: 'elena@example.com', otp_code: JOURNEY_CODE } },
      { action: 'FeVerifyOtp', body: { flow: 'email_with_phone', otp_code: JOURNEY_CODE } },
    ],
  },
  {
    id: 'email-login-phone-declined',
    name: 'Email with otp_phone, email never confirmed: not my phone',
    spec: 'get_user_email, then step 65 declined: the account without phone (61), a phone added',
    users: [{ uid: 'uid-francesca', email: 'francesca@example.com', phone: SQUATTER_PHONE, unconfirmed: true }],
    requests: [
      { action: 'FeLogin', body: { identifier: 'francesca@example.com' } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: 'francesca@example.com', otp_code: JOURNEY_CODE } },
      { action: 'FeVerifyOtp', body: { flow: 'email_phone_declined' } },
      { action: 'FeAddPhone', body: { flow: 'email_add_phone', phone: NEW_PHONE } },
      { action: 'FeVerifyOtp', body: { flow: 'email_add_phone', phone: NEW_PHONE, otp_code: JOURNEY_CODE } },
    ],
  },
  {
    id: 'email-login-add-phone',
    name: 'Email without phone',
    spec: 'get_user_email, login (password), otp_generate, verify_otp, update_profile, access_token',
    users: [{ uid: 'uid-carla', email: 'carla@example.com' }],
    requests: [
      { action: 'FeLogin', body: { identifier: 'carla@example.com' } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: 'carla@example.com', otp_code: JOURNEY_CODE } },
      {
        action: 'FeAddPhone',
        body: { flow: 'email_add_phone', phone: NEW_PHONE, uid: 'uid-carla', email: 'carla@example.com' },
      },
      {
        action: 'FeVerifyOtp',
        body: {
          flow: 'email_add_phone',
          phone: NEW_PHONE,
          uid: 'uid-carla',
          email: 'carla@example.com',
          otp_code: JOURNEY_CODE,
        },
      },
    ],
  },
  {
    id: 'email-signup',
    name: 'Email registration through FeRegister',
    spec: 'FeRegister phase email_otp (23 + pending_proof), then phase register (90)',
    users: [],
    requests: [
      { action: 'FeRegister', body: { phase: 'email_otp', email: 'dario@example.com', otp: true } },
      { action: 'FeVerifyOtp', body: { flow: 'email_register', email: 'dario@example.com', otp_code: JOURNEY_CODE } },
      {
        action: 'FeRegister',
        body: { phase: 'register', email: 'dario@example.com', first_name: 'Dario', last_name: 'Bianchi' },
      },
    ],
  },
  {
    id: 'password',
    name: 'Password path',
    spec: 'FeLogin, password path: next_step 60',
    users: [{ uid: 'uid-carla', email: 'carla@example.com' }],
    requests: [{ action: 'FeLogin', body: { identifier: 'carla@example.com', method: 'password' } }],
  },
  {
    id: 'passkey-login',
    name: 'Passkey, enrolled after a code login',
    spec: 'PasskeyLoginOptions, then PasskeyLogin: the assertion verified (101), access_token (90); no code (docs/passkeys.md)',
    users: [{ uid: 'uid-anna', email: 'anna@example.com', phone: PHONE, passkey: 'cred-anna' }],
    requests: [
      {
        action: 'PasskeyLogin',
        body: { passkey_proof: 'options-proof', credential: { id: 'cred-anna', type: 'public-key' } },
      },
    ],
  },
  {
    id: 'passkey-enrol',
    name: 'Passkey enrolled after a phone login',
    spec: 'a phone login (90), then PasskeyEnrolOptions with its proof: options (102), PasskeyEnrol: the passkey verified and kept (103); docs/passkeys.md',
    users: [{ uid: 'uid-anna', email: 'anna@example.com', phone: PHONE }],
    requests: [
      { action: 'FeLogin', body: { identifier: PHONE } },
      { action: 'FeVerifyOtp', body: { flow: 'phone', phone: PHONE, otp_code: JOURNEY_CODE } },
      { action: 'PasskeyEnrolOptions', body: {} },
      {
        action: 'PasskeyEnrol',
        body: { passkey_proof: 'options-proof', credential: { id: 'cred-anna', type: 'public-key' }, name: 'Passkey' },
      },
    ],
  },
];

/**
 * Replays a journey request by request: each request resumes from the proofs the earlier
 * answers handed out (claims only; signing is src/'s), with effects from `effectsFor`.
 */
export async function replayJourney(
  journey: Journey,
  effectsFor: (world: FakeWorld, calls: EffectCall[]) => FlowEffects = worldEffects,
): Promise<ReplayedRequest[]> {
  const world: FakeWorld = { users: journey.users.map((u) => ({ ...u })), code: JOURNEY_CODE };
  const proofs = new Map<ProofField, FlowClaims>();
  const replayed: ReplayedRequest[] = [];
  for (const request of journey.requests) {
    const calls: EffectCall[] = [];
    const machine = provideEffects(effectsFor(world, calls));
    const entry = ACTION_ENTRY[request.action];
    const field = proofFieldFor(entry, request.body);
    const claims = field ? proofs.get(field) : undefined;
    const { input, event } = flowRequest(entry, request.body, { claims });
    const result = await runStep(machine, { input, event, timeoutMs: 5000 });
    if (result.output.proof) proofs.set(result.output.proof.field, result.output.proof.claims);
    replayed.push({
      action: request.action,
      body: request.body,
      ...(claims && field ? { proofUsed: field } : {}),
      from: result.from,
      states: result.states,
      steps: result.steps,
      calls,
      answer: result.output,
    });
    if (!result.output.ok) break;
  }
  return replayed;
}
