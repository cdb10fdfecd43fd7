export { ACTIONS } from './openapi.js';
export type { components, operations, paths } from './openapi.js';
export { challengeOf, ClientError, createClient } from './client.js';
export type {
  ActionFunction,
  ActionName,
  AnswerOf,
  CallOptions,
  Challenge,
  Client,
  ClientOptions,
  DataOf,
  Envelope,
  Fetch,
  RequestOf,
  TransportFailure,
} from './client.js';
export { createJourney, PROOF_FIELDS } from './journey.js';
export { signalUnknownCredential } from './passkeys.js';
export type { WebAuthnBrowser, WebAuthnSource } from './passkeys.js';
export type {
  AddPhoneInput,
  EnrolPasskeyInput,
  Flow,
  Journey,
  JourneyOptions,
  JourneyState,
  LoginWithPasskeyInput,
  ProofField,
  RegisterInput,
  Step,
  UpdateProfileInput,
  VerifyOtpInput,
} from './journey.js';
