import type { ServiceContext } from './service-context';
import { invalidProof, proofBinds, signProof, verifyProof, type ProofClaims, type VerifiedProof } from './proofs';
import { apiError, isApiError } from '../core/errors';

/*
 * The security floor for the identity primitives (docs/security.md): no action issues a token, reveals a
 * profile or changes one unless the caller proved it verified a code for that identity (a
 * `verified` proof, body `proof` or header `x-verification-proof`) or sends `x-internal-key`
 * equal to `security.internal_key`. `security.guard_primitives: false` restores the legacy
 * open behaviour. The proof chain across actions is described in docs/identity.md.
 */

export const PROOF_HEADER = 'x-verification-proof';
const VERIFIED = 'verified';

/** The identifiers an action acts on: phone in E.164, email as typed (compared case-insensitively). */
export interface Identity {
  uid?: string;
  email?: string;
  phone?: string;
}

/**
 * `all`: every identifier named must be vouched for by the proof (acting on an existing account).
 * `any`: at least one is vouched for and none contradicts it (registering a new account with
 * the one key that was verified).
 */
export type Binding = 'all' | 'any';

type GuardContext = Pick<ServiceContext, 'deps' | 'header' | 'keys'>;
/** Who the caller is, by key: the keys were compared (and wrong ones counted) where the request came in (keys.ts). */
type KeyHolder = Pick<ServiceContext, 'deps' | 'keys'>;

/** Guard off, or the internal key: the caller needs no proof. */
export function trustedCaller(ctx: KeyHolder): boolean {
  return !ctx.deps.config.security.guard_primitives || ctx.keys.internal;
}

/**
 * Diagnostics (test_sms, test_mail, the collector's, recorded journeys): the internal key, or the
 * sandbox, whose upstreams and people are fake. Neither `debug` nor the guard switched off opens
 * them: they send real messages to whoever is named and show who logged in.
 */
export function diagnosticsCaller(ctx: KeyHolder): boolean {
  return ctx.deps.config.sandbox.enabled || ctx.keys.internal;
}

/**
 * The funnel statistics (docs/funnel.md): whoever may read diagnostics, or the read-only
 * `funnel.read_key` (header x-funnel-key), so a dashboard can read counts without holding a
 * key that also opens the guard. Counts only, but the traffic of a login service is still
 * nobody else's business: never public.
 */
export function funnelReader(ctx: KeyHolder): boolean {
  return diagnosticsCaller(ctx) || ctx.keys.funnel;
}

/** The verified proof the request carries (body first, then header); `invalid_proof` when one is there but not genuine. */
export function presentedProof(
  ctx: Pick<ServiceContext, 'deps' | 'header'>,
  fromBody?: string | null,
): VerifiedProof | undefined {
  const token = fromBody || ctx.header(PROOF_HEADER);
  if (!token) return undefined;
  return verifyProof(ctx.deps.proofKey, token, ctx.deps.now(), [VERIFIED]);
}

export function vouches(claims: ProofClaims, identity: Identity, binding: Binding): boolean {
  if (binding === 'any') return proofBinds(claims, identity);
  const named = (Object.entries(identity) as Array<[keyof Identity, string | undefined]>).filter(
    ([, value]) => value !== undefined,
  );
  return (
    named.length > 0 &&
    named.every(([key, value]) => {
      const vouched = claims[key];
      return (
        typeof vouched === 'string' &&
        (key === 'email' ? vouched.toLowerCase() === value!.toLowerCase() : vouched === value)
      );
    })
  );
}

export const proofRequired = () => apiError('proof_required');

/**
 * The guard, in one line of a handler: `const claims = requireVerified(ctx, { uid }, input.proof)`.
 * Returns the proof's claims, or null for a trusted caller (guard off or internal key).
 */
export function requireVerified(
  ctx: GuardContext,
  identity: Identity,
  proof?: string | null,
  binding: Binding = 'all',
): VerifiedProof | null {
  if (trustedCaller(ctx)) return null;
  const claims = presentedProof(ctx, proof);
  if (!claims || !vouches(claims, identity, binding)) throw proofRequired();
  return claims;
}

export interface ProofIdentities {
  /** Identifiers whose code the caller just verified. */
  verified?: Identity;
  /** Identifiers reached through a verified one (the uid and email of the account a verified phone belongs to). */
  linked?: Identity;
}

const defined = (identity: Identity = {}): Identity =>
  Object.fromEntries(Object.entries(identity).filter(([, value]) => typeof value === 'string' && value !== ''));

/** Two identifier sets that could be one account's: no key names two different values. */
function consistent(a: Identity, b: Identity): boolean {
  return (['uid', 'email', 'phone'] as const).every(
    (key) =>
      a[key] === undefined ||
      b[key] === undefined ||
      (key === 'email' ? a[key]!.toLowerCase() === b[key]!.toLowerCase() : a[key] === b[key]),
  );
}

/**
 * A `verified` proof. Derived from an earlier proof it keeps that proof's claims, its id (so
 * spending one spends both), its expiry and the start of its chain (`iat`), unless a code was
 * just verified (`verified` given: a new id and a new lifetime) or `fresh` says the earlier
 * proof was just spent (a new id). `restart` starts the chain now: the caller just claimed
 * the account (email-claim.ts). Every
 * identifier a proof names is one account's: a link or a verification that contradicts the
 * earlier claims is not merged (the proof then names only the new verification, or nothing
 * new). Claim `linked` lists the identifiers no code was verified for (docs/identity.md).
 */
export function issueVerifiedProof(
  ctx: Pick<ServiceContext, 'deps'>,
  { verified, linked }: ProofIdentities,
  basedOn?: VerifiedProof | null,
  { fresh = false, restart = false }: { fresh?: boolean; restart?: boolean } = {},
): string {
  const { deps } = ctx;
  const now = deps.now();
  const justVerified = defined(verified);
  const {
    exp,
    jti,
    iat,
    kind: _kind,
    linked: earlierLinked,
    ...earlierClaims
  } = basedOn ?? ({} as Partial<VerifiedProof>);
  // A verification that contradicts the earlier proof starts a new one: the two are not one account's.
  const earlier: Record<string, unknown> = consistent(earlierClaims as Identity, justVerified) ? earlierClaims : {};
  const merged = earlier === earlierClaims && basedOn !== undefined && basedOn !== null;
  const earlierIds = earlier as Identity;
  const links = defined(linked);
  const added = consistent({ ...earlierIds, ...justVerified }, links)
    ? Object.fromEntries(Object.entries(links).filter(([key]) => earlier[key] === undefined))
    : {};
  const linkedKeys = new Set([
    ...(merged && Array.isArray(earlierLinked) ? earlierLinked.filter((k): k is string => typeof k === 'string') : []),
    ...Object.keys(added),
  ]);
  for (const key of Object.keys(justVerified)) linkedKeys.delete(key);
  const derived = Object.keys(justVerified).length === 0 && exp !== undefined;
  const ttl = derived ? Math.max(1, exp - Math.floor(now / 1000)) : deps.config.security.proof_ttl_seconds;
  const claims: ProofClaims = {
    ...added,
    ...earlier,
    ...justVerified,
    kind: VERIFIED,
    ...(derived && !fresh && jti ? { jti } : {}),
    // The chain starts at its oldest code: what an earlier proof brings is as old as that proof (email-claim.ts voids older chains).
    ...(merged && !restart && iat !== undefined ? { iat } : {}),
    ...(linkedKeys.size > 0 ? { linked: [...linkedKeys].sort() } : {}),
  };
  return signProof(deps.proofKey, claims, ttl, now);
}

/** Refuses a proof naming an account whose email's owner claimed it after the proof's chain began (email-claim.ts). */
export async function refuseIfClaimedSince(
  ctx: Pick<ServiceContext, 'deps'>,
  claims: Pick<VerifiedProof, 'uid' | 'iat'>,
): Promise<void> {
  if (typeof claims.uid !== 'string') return;
  const claimedAt = await ctx.deps.otp.accountClaimedAt(claims.uid);
  if (claimedAt !== null && claims.iat < claimedAt) throw invalidProof('claimed');
}

/**
 * Runs a change a proof authorises, spending the proof first (atomic in the OTP store, so two
 * instances agree): a replayed or concurrent second use answers `invalid_proof`. When the
 * change fails the proof is given back, so an upstream outage costs the user nothing. A trusted
 * caller (claims null) spends nothing.
 */
export async function spending<T>(
  ctx: Pick<ServiceContext, 'deps'>,
  claims: VerifiedProof | null,
  change: () => Promise<T>,
): Promise<T> {
  if (!claims) return change();
  const { otp } = ctx.deps;
  await refuseIfClaimedSince(ctx, claims);
  if (!(await otp.spendProof(claims.jti, claims.exp * 1000))) throw invalidProof('spent');
  try {
    return await change();
  } catch (err) {
    if (!keepsProofSpent(err)) await otp.unspendProof(claims.jti).catch(() => {});
    throw err;
  }
}

/**
 * A failed change gives its proof back (an outage changed nothing, the user retries), unless
 * the provider answered it for good: a registration refused would otherwise let one verified
 * code ask about any number of emails.
 */
const keepsProofSpent = (err: unknown): boolean => isApiError(err) && err.reason === 'registration_refused';

/** True when the caller verified a code for this identifier (it is claimed and not merely linked). */
export function codeVerified(claims: ProofClaims, key: keyof Identity): boolean {
  return typeof claims[key] === 'string' && !(Array.isArray(claims.linked) && claims.linked.includes(key));
}
