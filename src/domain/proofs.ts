import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { randomId } from '../core/random-id';
import type { FlowClaims } from '../../machines/effects';
import { apiError } from '../core/errors';

/*
 * Proofs carry flow state between requests instead of a server-side session: a JSON claim set,
 * HMAC-SHA256-signed with a key derived from `security.secret`, with an expiry. They bind the
 * identifiers they vouch for, so a proof from one user's flow never unlocks another's uid.
 * Format: `v1.<base64url(claims)>.<base64url(mac)>`, each part in its one canonical base64url
 * spelling (no padding, no stray characters), so one proof has exactly one string.
 *
 * Every proof has an id (`jti`). A proof that authorises a change (registration, token,
 * profile, DOI) is spent on use: its id is recorded in the OTP store, and the answer hands out
 * a proof with a new id. Proofs derived without a change (a lookup that links the account, the
 * next screen of a journey) keep the id, so spending one spends them all (docs/security.md).
 */

/**
 * What a proof says (the login machine's FlowClaims, which the journeys restore from): what it
 * vouches for (`kind`: `verified` when a code was verified, `pending`, `phone`, `register`),
 * the identifiers it binds, its id (`jti`, minted when absent) and the start of its chain
 * (`iat`, now when absent; kept by every proof derived from it).
 */
export interface ProofClaims extends FlowClaims {
  [extra: string]: unknown;
}

export interface VerifiedProof extends ProofClaims {
  /** Expiry, seconds since the epoch. */
  exp: number;
  /** When the chain this proof belongs to started (the code it comes from), ms since the epoch. */
  iat: number;
  jti: string;
}

const PREFIX = 'v1';

/** The key proofs are signed with, derived from the service secret: once, by createDeps (`deps.proofKey`), not on every proof. */
export type ProofKey = KeyObject;

/** Separate key from the one that hashes codes, so one can never be replayed as the other. */
export const deriveProofKey = (secret: string): ProofKey =>
  createSecretKey(createHmac('sha256', secret).update('proof-key:v1').digest());

/** The derived key; a secret given instead (tests, one-off callers) is derived on the spot. */
const keyOf = (key: string | ProofKey): ProofKey => (typeof key === 'string' ? deriveProofKey(key) : key);

const mac = (key: ProofKey, body: string) => createHmac('sha256', key).update(`${PREFIX}.${body}`).digest();

/** Proof ids: 12 random bytes each, from the process's pool of random ids (src/core/random-id.ts). */
const newProofId = (): string => randomId(12);

export function signProof(key: string | ProofKey, claims: ProofClaims, ttlSeconds: number, nowMs: number): string {
  const { exp: _exp, ...rest } = claims;
  const iat = typeof claims.iat === 'number' ? claims.iat : nowMs;
  const body = Buffer.from(
    JSON.stringify({ ...rest, jti: claims.jti ?? newProofId(), iat, exp: Math.floor(nowMs / 1000) + ttlSeconds }),
  ).toString('base64url');
  return `${PREFIX}.${body}.${mac(keyOf(key), body).toString('base64url')}`;
}

/** A proof refused: tampered, expired, of the wrong kind, or binding someone else. `why` says which, for support. */
export const invalidProof = (why: string, data: Record<string, unknown> = {}) =>
  apiError('invalid_proof', { data: { why, ...data } });
const invalid = (why: string) => invalidProof(why);

// Stryker disable next-line Regex: equivalent, the round trip below refuses any character outside the alphabet too; this refuses it before decoding
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The bytes of a base64url part, or null unless `part` is their one canonical spelling. */
function strictBase64url(part: string): Buffer | null {
  // Stryker disable next-line ConditionalExpression: equivalent, as the pattern's anchors (see BASE64URL)
  if (!BASE64URL.test(part)) return null;
  const bytes = Buffer.from(part, 'base64url');
  return bytes.toString('base64url') === part ? bytes : null;
}

/** Returns the claims of a genuine, unexpired proof of one of the expected kinds; throws `invalid_proof` otherwise. */
export function verifyProof(
  key: string | ProofKey,
  token: unknown,
  nowMs: number,
  kinds?: readonly string[],
): VerifiedProof {
  // Stryker disable next-line EqualityOperator: equivalent at 4,096 exactly, which no genuine proof is (47 characters and an unpadded base64url body, never 1 more than a multiple of 4)
  if (typeof token !== 'string' || token.length > 4096) throw invalid('malformed');
  const [prefix, body, signature, ...rest] = token.split('.');
  if (prefix !== PREFIX || !body || !signature || rest.length > 0) throw invalid('malformed');
  const given = strictBase64url(signature);
  const payload = strictBase64url(body);
  if (!given || !payload) throw invalid('malformed');
  const expected = mac(keyOf(key), body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('signature');
  let claims: VerifiedProof;
  try {
    claims = JSON.parse(payload.toString('utf8')) as VerifiedProof;
  } catch {
    throw invalid('malformed');
  }
  // null is the one JSON value whose fields cannot be read; any other that is no object has no string `kind`.
  if (
    claims === null ||
    typeof claims.kind !== 'string' ||
    typeof claims.exp !== 'number' ||
    typeof claims.iat !== 'number' ||
    typeof claims.jti !== 'string'
  ) {
    throw invalid('malformed');
  }
  if (claims.exp * 1000 <= nowMs) throw invalid('expired');
  if (kinds && !kinds.includes(claims.kind)) throw invalid('kind');
  return claims;
}

/** True when the proof binds this identifier (the identifiers it names must match those acted on). */
export function proofBinds(claims: ProofClaims, identity: { uid?: string; email?: string; phone?: string }): boolean {
  const pairs: Array<[string | undefined, string | undefined]> = [
    [claims.uid, identity.uid],
    [claims.email?.toLowerCase(), identity.email?.toLowerCase()],
    [claims.phone, identity.phone],
  ];
  // At least one identifier acted on must be vouched for, and none may contradict the proof.
  let bound = false;
  for (const [vouched, acted] of pairs) {
    if (acted === undefined) continue;
    if (vouched === undefined) continue;
    if (vouched !== acted) return false;
    bound = true;
  }
  return bound;
}
