import { randomBytes } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { apiError, isApiError, type ApiError } from '../../core/errors';
import type { ServiceContext } from '../service-context';
import { signProof, verifyProof, type VerifiedProof } from '../proofs';
import type { CredentialStore, StoredCredential } from './store';

/*
 * The two WebAuthn ceremonies (docs/passkeys.md), verified by @simplewebauthn/server: no CBOR,
 * COSE or attestation parsing here. Each ceremony's options travel with a signed `passkey_proof`
 * naming their challenge (and, for an enrolment, the account and the login proof it came from),
 * so no instance keeps a pending challenge; the proof's id is spent in the store the codes use
 * when the answer comes back, so a challenge serves once across every instance, and it expires
 * with the proof.
 */

/**
 * @simplewebauthn/server, loaded at the first ceremony: it and its X.509 and ASN.1 parsers take
 * most of a second of CPU to load, which every start with passkeys off and every test that builds
 * the app would pay for nothing. A require, not import(): the build is CommonJS, and Jest runs
 * CommonJS without its ESM loader.
 */
const webauthn = () =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('@simplewebauthn/server') as typeof import('@simplewebauthn/server');

const ENROL = 'passkey_enrol';
const LOGIN = 'passkey_login';

export type PasskeyContext = Pick<ServiceContext, 'deps' | 'log'>;

/** Where the ceremonies are bound: the configured relying party, or localhost outside production. */
export function relyingParty(config: ServiceContext['deps']['config']): {
  id: string;
  name: string;
  origins: string[];
} {
  const { rp_id: id, rp_name: name, origins } = config.passkeys;
  return {
    id: id || 'localhost',
    name,
    origins: origins.length > 0 ? origins : [`http://localhost:${config.server.port}`],
  };
}

const refused = (why: string, data: Record<string, unknown> = {}) =>
  apiError('passkey_refused', { data: { why, ...data } });
const challengeInvalid = (why: string) => apiError('passkey_challenge_invalid', { data: { why } });

/** The claims of a genuine, unexpired passkey proof of this ceremony; the challenge's own refusal otherwise. */
function ceremonyClaims(ctx: PasskeyContext, token: string, kind: string): VerifiedProof {
  try {
    return verifyProof(ctx.deps.proofKey, token, ctx.deps.now(), [kind]);
  } catch (err) {
    const why = isApiError(err) && typeof err.data?.why === 'string' ? err.data.why : 'malformed';
    throw challengeInvalid(why);
  }
}

/** Spends the ceremony's proof: its challenge answers once, whichever instance is asked. */
async function spendChallenge(ctx: PasskeyContext, claims: VerifiedProof): Promise<void> {
  if (!(await ctx.deps.otp.spendProof(claims.jti, claims.exp * 1000))) throw challengeInvalid('used');
}

/** What the library says is wrong with a response, as a stable `why` (its messages are for people). */
function whyRefused(err: unknown): ApiError {
  const message = err instanceof Error ? err.message : '';
  const rules: Array<[RegExp, string]> = [
    [/origin/i, 'origin'],
    [/rp ?id/i, 'rp_id'],
    [/challenge/i, 'challenge'],
    [/user verification|could not be verified/i, 'user_verification'],
    [/user presence|not present/i, 'user_presence'],
    [/counter/i, 'counter'],
    [/signature/i, 'signature'],
    [/type/i, 'type'],
  ];
  const why = rules.find(([pattern]) => pattern.test(message))?.[1] ?? 'malformed';
  return refused(why);
}

const challengeTtl = (ctx: PasskeyContext) => ctx.deps.config.passkeys.challenge_ttl_seconds;

/** The login proof an enrolment is bound to: only its account and its id are read. */
export type EnrolLogin = Pick<VerifiedProof, 'jti'> & { uid: string };

export interface EnrolOptions {
  options: PublicKeyCredentialCreationOptionsJSON;
  passkeyProof: string;
}

/**
 * The options to enrol a passkey on the account a fresh login proved (`login`, its verified
 * proof): the account's random user handle, its passkeys excluded, a resident key and user
 * verification required.
 */
export async function enrolOptions(
  ctx: PasskeyContext,
  store: CredentialStore,
  login: EnrolLogin,
  userName: string,
): Promise<EnrolOptions> {
  const rp = relyingParty(ctx.deps.config);
  // One random handle per account, never its uid, phone or email: what an authenticator keeps names nobody.
  const handle = (await store.userHandleOf(login.uid)) ?? randomBytes(32).toString('base64url');
  const existing = await store.listByUid(login.uid);
  const options = await webauthn().generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: Buffer.from(handle, 'base64url'),
    userName,
    userDisplayName: userName,
    challenge: randomBytes(32),
    timeout: challengeTtl(ctx) * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports as never })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  const passkeyProof = signProof(
    ctx.deps.proofKey,
    { kind: ENROL, challenge: options.challenge, uid: login.uid, handle, login: login.jti },
    challengeTtl(ctx),
    ctx.deps.now(),
  );
  return { options, passkeyProof };
}

/** A passkey as its owner sees it (never its key or its handle). */
export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  device_type: string;
  backed_up: boolean;
}

export const viewOf = (c: StoredCredential): PasskeyView => ({
  id: c.id,
  name: c.name,
  created_at: new Date(c.createdAt).toISOString(),
  last_used_at: c.lastUsedAt === null ? null : new Date(c.lastUsedAt).toISOString(),
  device_type: c.deviceType,
  backed_up: c.backedUp,
});

/** Verifies an enrolment against its options and the same login proof that asked for them, and keeps the passkey. */
export async function enrol(
  ctx: PasskeyContext,
  store: CredentialStore,
  input: {
    login: EnrolLogin;
    passkeyProof: string;
    response: RegistrationResponseJSON;
    name: string;
  },
): Promise<PasskeyView> {
  const claims = ceremonyClaims(ctx, input.passkeyProof, ENROL);
  // Options asked with one person's login proof enrol only with that same proof: a leaked passkey proof enrols nothing.
  if (claims.uid !== input.login.uid || claims.login !== input.login.jti) throw challengeInvalid('mismatch');
  await spendChallenge(ctx, claims);
  const rp = relyingParty(ctx.deps.config);
  let verified;
  try {
    verified = await webauthn().verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: String(claims.challenge),
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
  } catch (err) {
    throw whyRefused(err);
  }
  if (!verified.verified) throw refused('not_verified');
  const info = verified.registrationInfo;
  const credential: StoredCredential = {
    id: info.credential.id,
    publicKey: info.credential.publicKey,
    counter: info.credential.counter,
    transports: info.credential.transports ?? input.response.response.transports ?? [],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
    userHandle: String(claims.handle),
    uid: input.login.uid,
    name: input.name,
    createdAt: ctx.deps.now(),
    lastUsedAt: null,
  };
  // The insert itself decides: a check before it would let two enrolments of one credential both pass it.
  if (!(await store.insert(credential))) throw refused('already_registered');
  ctx.log.info(
    { event: 'passkey_enrolled', uid: credential.uid, device_type: credential.deviceType },
    'passkey enrolled',
  );
  return viewOf(credential);
}

export interface LoginOptions {
  options: PublicKeyCredentialRequestOptionsJSON;
  passkeyProof: string;
}

/**
 * Options for a login by passkey, the same for everybody: no identifier is asked and no
 * credential listed (the browser offers the discoverable ones it holds), so nothing here can
 * tell whether an account has passkeys.
 */
export async function loginOptions(ctx: PasskeyContext): Promise<LoginOptions> {
  const rp = relyingParty(ctx.deps.config);
  const options = await webauthn().generateAuthenticationOptions({
    rpID: rp.id,
    challenge: randomBytes(32),
    timeout: challengeTtl(ctx) * 1000,
    userVerification: 'required',
    allowCredentials: [],
  });
  const passkeyProof = signProof(
    ctx.deps.proofKey,
    { kind: LOGIN, challenge: options.challenge },
    challengeTtl(ctx),
    ctx.deps.now(),
  );
  return { options, passkeyProof };
}

/** Verifies an assertion; the account it proves. The counter moves, and the use is recorded, only on success. */
export async function login(
  ctx: PasskeyContext,
  store: CredentialStore,
  input: { passkeyProof: string; response: AuthenticationResponseJSON },
): Promise<{ uid: string; credential: StoredCredential }> {
  const claims = ceremonyClaims(ctx, input.passkeyProof, LOGIN);
  await spendChallenge(ctx, claims);
  const credential = await store.get(input.response.id);
  const unknown = () => apiError('passkey_unknown', { data: { credential_id: input.response.id } });
  if (!credential) throw unknown();
  // The handle the authenticator returns must be the one it was given for this credential.
  const handle = input.response.response.userHandle;
  if (handle !== undefined && handle !== credential.userHandle) throw refused('user_handle');
  const rp = relyingParty(ctx.deps.config);
  let verified;
  try {
    verified = await webauthn().verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: String(claims.challenge),
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: credential.id,
        publicKey: credential.publicKey as Uint8Array<ArrayBuffer>,
        counter: credential.counter,
        transports: credential.transports as never,
      },
      requireUserVerification: true,
    });
  } catch (err) {
    const refusal = whyRefused(err);
    if (refusal.data?.why === 'counter')
      // A counter that did not move forward: the key may have been copied out of its authenticator.
      ctx.log.warn(
        { event: 'passkey_counter_back', uid: credential.uid, stored: credential.counter },
        'passkey counter went back: possible cloned authenticator',
      );
    throw refusal;
  }
  if (!verified.verified) throw refused('not_verified');
  const { newCounter, credentialBackedUp } = verified.authenticationInfo;
  // Only from the counter read above: an instance that moved it meanwhile wins, this one refuses.
  if (!(await store.recordUse(credential.id, credential.counter, newCounter, credentialBackedUp, ctx.deps.now()))) {
    throw (await store.get(credential.id)) ? refused('counter') : unknown();
  }
  return { uid: credential.uid, credential };
}
