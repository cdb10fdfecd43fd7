import { createHash, createPrivateKey, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/*
 * The passkey of the passkey_login case: one synced passkey (its counter stays 0, as synced
 * passkeys report, so every connection may use it at once), known to both sides. The service
 * child keeps its public key as an enrolment would (bench/service.ts); the load generator signs
 * each assertion with its private key, so the signing is the load's CPU and the verifying the
 * service's. A fixed key: the two are separate processes, and a bench key guards nothing.
 */

const JWK = {
  kty: 'EC',
  crv: 'P-256',
  x: '-4Vqy8ypjHlmVFR7hopFEwBETA8KjvH6K-CbTko4O7k',
  y: 'KkR7WLeOiFpws-1JkBl3U5k9o9exSCM8hTObUzYeb8s',
  d: 'HyKVkRDRp211ir5hIUm5ZSDnaWkIpAKJ-DqSxVcrKys',
};

export const BENCH_PASSKEY = {
  id: 'YmVuY2gtcGFzc2tleS0x',
  userHandle: 'YmVuY2gtdXNlci1oYW5kbGU',
  /** The bench's recorded profile's uid: the token is issued to an account the fake identity provider knows. */
  uid: 'PNIa7Xk2mR0ssi',
  origin: 'http://localhost:8080',
  rpId: 'localhost',
};

/** Its public key as COSE (EC2, ES256), what an enrolment keeps. */
export const benchPasskeyPublicKey = (): Uint8Array =>
  isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(JWK.x, 'base64url')],
      [-3, Buffer.from(JWK.y, 'base64url')],
    ]),
  );

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
// Present, verified, backup eligible and backed up: a synced passkey.
const FLAGS = 0x01 | 0x04 | 0x08 | 0x10;
const AUTH_DATA = Buffer.concat([sha256(BENCH_PASSKEY.rpId), Buffer.from([FLAGS]), Buffer.alloc(4)]);

/** The PasskeyLogin body answering a challenge of PasskeyLoginOptions, as `startAuthentication` would send it. */
export function benchAssertionBody(challenge: string, passkeyProof: string): string {
  const key = (benchAssertionBody.key ??= createPrivateKey({ key: JWK, format: 'jwk' }));
  const clientDataJSON = Buffer.from(
    JSON.stringify({ type: 'webauthn.get', challenge, origin: BENCH_PASSKEY.origin, crossOrigin: false }),
  );
  const signature = sign('sha256', Buffer.concat([AUTH_DATA, sha256(clientDataJSON)]), key);
  return JSON.stringify({
    passkey_proof: passkeyProof,
    credential: {
      id: BENCH_PASSKEY.id,
      rawId: BENCH_PASSKEY.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: AUTH_DATA.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: BENCH_PASSKEY.userHandle,
      },
      clientExtensionResults: {},
    },
  });
}
benchAssertionBody.key = undefined as ReturnType<typeof createPrivateKey> | undefined;
