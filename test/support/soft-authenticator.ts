import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/*
 * A software authenticator on node:crypto, for tests: an ES256 key pair per credential, the
 * authenticatorData and clientDataJSON a browser and a platform authenticator would build, and
 * the signature over them, as the WebAuthn spec lays them out. Only what the server must check
 * is here; each field can be bent (another origin, another rp id, no user verification, a
 * counter set back) to show the server refuses it. CBOR comes from @simplewebauthn's helpers.
 */

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 };

export interface Bend {
  origin?: string;
  rpId?: string;
  /** false: the person was present but not verified (no fingerprint, no PIN). */
  userVerified?: boolean;
  /** The counter this assertion reports, instead of the next one. */
  counter?: number;
  type?: string;
}

interface Credential {
  id: Buffer;
  key: KeyObject;
  publicJwk: { x: string; y: string };
  userHandle: string;
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];

  /** `counts`: false for a synced passkey, whose counter stays 0. */
  constructor(
    readonly origin: string,
    readonly counts = true,
  ) {}

  private authData(rpId: string, flags: number, counter: number, attested?: Credential): Buffer {
    const parts: Buffer[] = [sha256(rpId), Buffer.from([flags]), Buffer.alloc(4)];
    parts[2]!.writeUInt32BE(counter);
    if (attested) {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(attested.id.length);
      const cose = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(attested.publicJwk.x, 'base64url')],
          [-3, Buffer.from(attested.publicJwk.y, 'base64url')],
        ]),
      );
      parts.push(Buffer.alloc(16), len, attested.id, Buffer.from(cose));
    }
    return Buffer.concat(parts);
  }

  private clientData(type: string, challenge: string, bend: Bend): Buffer {
    return Buffer.from(
      JSON.stringify({ type: bend.type ?? type, challenge, origin: bend.origin ?? this.origin, crossOrigin: false }),
    );
  }

  private flags(bend: Bend, extra = 0): number {
    return FLAG.UP | (bend.userVerified === false ? 0 : FLAG.UV) | (this.counts ? 0 : FLAG.BE | FLAG.BS) | extra;
  }

  /**
   * Answers PublicKeyCredentialCreationOptionsJSON as `startRegistration` would, with a new
   * credential, or attesting again one it holds (`again`: two enrolments of one credential).
   */
  register(
    options: { challenge: string; rp: { id?: string }; user: { id: string } },
    bend: Bend = {},
    again?: Credential,
  ) {
    const credential = again ?? this.newCredential(options.user.id);
    const authData = this.authData(bend.rpId ?? options.rp.id!, this.flags(bend, FLAG.AT), 0, credential);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]) as never,
    );
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, bend)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  private newCredential(userHandle: string): Credential {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const credential: Credential = {
      id: randomBytes(16),
      key: privateKey,
      publicJwk: { x: jwk.x!, y: jwk.y! },
      userHandle,
      counter: 0,
    };
    this.credentials.push(credential);
    return credential;
  }

  /** Answers PublicKeyCredentialRequestOptionsJSON as `startAuthentication` would, with `credential` (the first by default). */
  assert(options: { challenge: string; rpId?: string }, bend: Bend = {}, credential = this.credentials[0]!) {
    if (this.counts && bend.counter === undefined) credential.counter += 1;
    const counter = bend.counter ?? credential.counter;
    const authData = this.authData(bend.rpId ?? options.rpId!, this.flags(bend), counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, bend);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.key);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
