/*
 * The frontend step numbers of the contract (docs/contract.md#steps),
 * named. A state of a login-flow machine carries its step as a tag (`step:14`); the numbers
 * the contract does not explain got the meanings written here and argued in docs/flows-design.md.
 * Imports nothing: the machines, the diagrams and src/ all read these.
 */

export const STEP = {
  /** FeLogin, phone: the code goes out by SMS only. */
  smsCodeSent: 13,
  /** The user types the code received by SMS. */
  enterPhoneCode: 14,
  /** FeLogin, email: the code goes out by email. */
  emailCodeSent: 32,
  /** The user types the code received by email. */
  enterEmailCode: 33,
  /** FeLogin, password path: the user types the password (the `login` action completes it). */
  enterPassword: 60,
  /** The registration email: typed (phone verified, no account holds it), then its code checked against the pending proof. */
  enterRegistrationEmail: 24,
  /** FeRegister email_otp: a code went to that email; the user types it. */
  enterRegistrationEmailCode: 23,
  /** FeVerifyOtp phone_register: the email code matched, a `register_proof` is issued. */
  registerProofIssued: '24b',
  /** Phone and email verified: the registration form (personal data). */
  registrationForm: 25,
  /** FeVerifyOtp email: the email code is being checked. */
  emailVerification: 34,
  /** The account of the verified email is being looked up. */
  userLookup: 30,
  /** An account exists: its phone on file decides the way on. */
  accountFound: 31,
  /** The email is verified and no account holds it: the registration form (personal data). */
  newUserForm: 37,
  /**
   * The account has a phone: login completes, or, when a claim just dropped it (the email was
   * never confirmed), a code goes to it and the user proves it or says it is not theirs.
   */
  knownUserWithPhone: 65,
  /** The account has no phone: the user types one to add. */
  addPhone: 61,
  /** FeAddPhone: a code went by SMS to the new phone; the user types it. */
  enterNewPhoneCode: 62,
  /** Registration: the email's double opt-in is confirmed at the identity provider. */
  doiConfirmed: 36,
  /** Identity fields (first_name, last_name, email) saved. */
  identitySaved: 40,
  /** Custom fields (city, birth_date, otp_phone) saved. */
  customFieldsSaved: 42,
  /** Logged in: a token was issued (cookie `__utp`) and the collector ingest was queued. */
  loggedIn: 90,
} as const;

/**
 * Steps outside the contract's numbers: the passkey paths (docs/passkeys.md). A frontend that
 * knows nothing of passkeys never meets them: no answer of the contract's actions names one, and
 * the contract's `next_step` stays `STEP`'s (src/flows/answer.ts). From 101 up, so no number the
 * contract may give later collides with them.
 */
export const PASSKEY_STEP = {
  /** PasskeyLogin: the assertion the browser signed is being verified (then 90, as a code login). */
  passkeyAsserting: 101,
  /** PasskeyEnrolOptions, after 90: the registration options issued; the browser creates the passkey. */
  passkeyOffered: 102,
  /** PasskeyEnrol: the new passkey verified and kept on the account (the person is still at 90's login). */
  passkeyEnrolled: 103,
} as const;

type StepName = keyof typeof STEP;
/** One of the contract's step numbers, or a passkey's (outside them). */
export type StepId = (typeof STEP)[StepName] | (typeof PASSKEY_STEP)[keyof typeof PASSKEY_STEP];
/** Every step the machine tags a state with: the contract's, then the passkeys'. */
const ALL_STEPS: readonly StepId[] = [...Object.values(STEP), ...Object.values(PASSKEY_STEP)];

/** The two profile saves: identity fields (40), then custom fields (42). */
export type ProfileStep = typeof STEP.identitySaved | typeof STEP.customFieldsSaved;

/** The tag a state carries for its step. */
export const stepTag = (step: StepId): `step:${StepId}` => `step:${step}`;

/** The step of a tag, or undefined for other tags. */
export function stepOfTag(tag: string): StepId | undefined {
  if (!tag.startsWith('step:')) return undefined;
  const raw = tag.slice(5);
  const value = /^\d+$/.test(raw) ? Number(raw) : raw;
  return ALL_STEPS.find((step) => step === value);
}

/** Tag of the states a request stops at: the user must act (or read a failure) before anything else happens. */
export const SETTLED = 'settled';
/** Tag of the state a refused request ends in. */
export const FAILED = 'failed';

export interface StepInfo {
  /** What the frontend shows; `wire` says the contract names it, so the answer carries it as `screen`. */
  screen: string;
  wire?: true;
  meaning: string;
}

/** One line per step for the docs (the `meaning` column) and for the `screen` field of answers. */
export const STEP_INFO: Record<StepId, StepInfo> = {
  [STEP.smsCodeSent]: { screen: 'otp_sms', meaning: 'code sent by SMS only to the phone typed' },
  [STEP.enterPhoneCode]: { screen: 'otp_sms', meaning: 'enter the code received by SMS' },
  [STEP.emailCodeSent]: { screen: 'otp_email', meaning: 'code sent by email to the address typed' },
  [STEP.enterEmailCode]: { screen: 'otp_email', meaning: 'enter the code received by email' },
  [STEP.enterPassword]: { screen: 'password', meaning: 'enter the password (completed by the `login` action)' },
  [STEP.enterRegistrationEmail]: {
    screen: 'register_email',
    meaning:
      'registration email: phone verified and no account, type an email; later its code is checked with the pending proof',
  },
  [STEP.enterRegistrationEmailCode]: { screen: 'otp_email', meaning: 'registration email code sent: enter it' },
  [STEP.registerProofIssued]: {
    screen: 'register_email',
    meaning: 'registration email verified: register_proof issued',
  },
  [STEP.registrationForm]: { screen: 'register_form', meaning: 'phone and email verified: personal data form' },
  [STEP.emailVerification]: { screen: 'otp_email', meaning: 'email verification: the email code is checked' },
  [STEP.userLookup]: { screen: 'otp_email', meaning: 'user lookup by the verified email' },
  [STEP.accountFound]: { screen: 'otp_email', meaning: 'account found: the phone on file decides' },
  [STEP.newUserForm]: { screen: 'register_form', meaning: 'email verified, new user: personal data form' },
  [STEP.knownUserWithPhone]: {
    screen: 'otp_phone_on_file',
    meaning:
      'account with a phone: login completes; if its email was never confirmed, a code goes to that phone (masked in `phone_hint`): proving it keeps the phone (90), "not my phone" drops it (61)',
  },
  [STEP.addPhone]: { screen: 'add_phone', meaning: 'account without phone: type a phone to add' },
  [STEP.enterNewPhoneCode]: { screen: 'otp_phone', wire: true, meaning: 'code sent by SMS to the new phone: enter it' },
  [STEP.doiConfirmed]: { screen: 'register_form', meaning: 'double opt-in of the email confirmed' },
  [STEP.identitySaved]: { screen: 'register_form', meaning: 'identity fields saved (first_name, last_name, email)' },
  [STEP.customFieldsSaved]: { screen: 'register_form', meaning: 'custom fields saved (city, birth_date, otp_phone)' },
  [STEP.loggedIn]: {
    screen: 'success',
    wire: true,
    meaning: 'logged in: token issued, cookie set, collector ingest queued',
  },
  [PASSKEY_STEP.passkeyAsserting]: {
    screen: 'passkey',
    meaning: 'login by passkey: the assertion is verified (no code), then 90 as a code login',
  },
  [PASSKEY_STEP.passkeyOffered]: {
    screen: 'passkey_enrol',
    meaning: 'the passkey offered: registration options issued, the browser creates the passkey',
  },
  [PASSKEY_STEP.passkeyEnrolled]: {
    screen: 'passkey_enrolled',
    meaning: 'the passkey verified and kept on the account; its login stays the one of 90',
  },
};

/** The contract's `flow` values (FeVerifyOtp's request), and `email_phone_declined`: "not my phone" at step 65. */
export const FLOWS = [
  'phone',
  'email_with_phone',
  'email',
  'phone_register',
  'email_register',
  'email_add_phone',
  'email_register_phone',
  'email_phone_declined',
] as const;
export type Flow = (typeof FLOWS)[number];

/**
 * The identifiers a code was verified for once a flow hands out a `verified` proof. The other
 * identifiers such a proof names were reached through these (the uid and email of the account
 * a verified phone belongs to): the proof lists them as `linked`, so nothing downstream mistakes
 * a phone login for a verified email (doi_confirm needs the email itself verified).
 */
export const CODE_VERIFIED: Readonly<Record<Flow, ReadonlyArray<'phone' | 'email'>>> = {
  phone: ['phone'],
  email_with_phone: ['email'],
  email: ['email'],
  phone_register: ['phone', 'email'],
  email_register: ['email'],
  email_add_phone: ['email', 'phone'],
  email_register_phone: ['email', 'phone'],
  // Declining the phone on file verifies nothing; its answer goes on as email_add_phone.
  email_phone_declined: [],
};
