import { z } from 'zod';
import { apiError } from '../../core/errors';
import type { ServiceContext } from '../../domain/deps';
import { presentedProof, proofRequired, refuseIfClaimedSince } from '../../domain/guard';
import type { VerifiedProof } from '../../domain/proofs';
import type { CredentialStore } from '../../domain/passkeys/store';

/* Request fields and the one check the passkey actions share (docs/passkeys.md). */

export const passkeyProofField = z
  .string()
  .max(4096)
  .describe('the `passkey_proof` of the options this ceremony answers (PasskeyEnrolOptions, PasskeyLoginOptions)');

const b64url = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');

/** The credential as @simplewebauthn/browser returns it (`startRegistration`, `startAuthentication`). */
const credentialBase = {
  id: b64url(1024),
  rawId: b64url(1024),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};

export const registrationCredential = z
  .object({
    ...credentialBase,
    response: z.object({
      clientDataJSON: b64url(4096),
      attestationObject: b64url(16384),
      transports: z.array(z.string().max(32)).max(10).optional(),
    }),
  })
  .describe('the new credential, as `startRegistration` of @simplewebauthn/browser returns it');

export const authenticationCredential = z
  .object({
    ...credentialBase,
    response: z.object({
      clientDataJSON: b64url(4096),
      authenticatorData: b64url(4096),
      signature: b64url(1024),
      userHandle: b64url(256).optional(),
    }),
  })
  .describe('the assertion, as `startAuthentication` of @simplewebauthn/browser returns it');

export const optionsResponse = (what: string) =>
  z.object({
    options: z.record(z.string(), z.unknown()).describe(`${what}: hand them to @simplewebauthn/browser as they are`),
    passkey_proof: z
      .string()
      .describe('send it back with the credential; good once, for passkeys.challenge_ttl_seconds'),
  });

/** The credential store, or `passkeys_disabled` when passkeys are off. */
export async function passkeyStore(ctx: ServiceContext): Promise<CredentialStore> {
  if (!ctx.deps.passkeys.enabled) throw apiError('passkeys_disabled');
  return ctx.deps.passkeys.store();
}

/** The `verified` proof of a fresh login naming an account (the one answered at 90); `proof_required` otherwise. */
export async function provenLogin(
  ctx: ServiceContext,
  proof: string | null | undefined,
): Promise<VerifiedProof & { uid: string }> {
  const login = presentedProof(ctx, proof);
  if (!login || typeof login.uid !== 'string') throw proofRequired();
  await refuseIfClaimedSince(ctx, login);
  return { ...login, uid: login.uid };
}

export const passkeyView = z.object({
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  device_type: z.string(),
  backed_up: z.boolean(),
});

export const passkeyIdField = b64url(1024).min(1).describe('the `id` of one of the account’s passkeys');
export const passkeyNameField = z.string().trim().min(1).max(64).describe('what the person calls this passkey');
