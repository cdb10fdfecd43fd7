import { createHmac } from 'node:crypto';
import { proofBinds, signProof, verifyProof } from '../../src/domain/proofs';

const secret = 'proof-test-secret';
const now = 1_700_000_000_000;

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return `${(err as { reason?: string }).reason}:${(err as { data?: { why?: string } }).data?.why}`;
  }
  return 'accepted';
};

describe('proofs', () => {
  it('round-trips claims with an expiry', () => {
    const token = signProof(secret, { kind: 'verified', phone: '+393331234567', flow: 'phone' }, 900, now);
    expect(verifyProof(secret, token, now + 899_000)).toMatchObject({
      kind: 'verified',
      phone: '+393331234567',
      flow: 'phone',
      exp: now / 1000 + 900,
    });
  });

  it('refuses an expired proof', () => {
    const token = signProof(secret, { kind: 'verified' }, 60, now);
    expect(reasonOf(() => verifyProof(secret, token, now + 60_000))).toBe('invalid_proof:expired');
  });

  it('refuses a tampered proof and one signed with another secret', () => {
    const token = signProof(secret, { kind: 'verified', uid: 'u1' }, 60, now);
    const [prefix, , signature] = token.split('.');
    const forged = `${prefix}.${Buffer.from(JSON.stringify({ kind: 'verified', uid: 'u2', exp: now / 1000 + 60 })).toString('base64url')}.${signature}`;
    expect(reasonOf(() => verifyProof(secret, forged, now))).toBe('invalid_proof:signature');
    expect(reasonOf(() => verifyProof('other', token, now))).toBe('invalid_proof:signature');
    expect(reasonOf(() => verifyProof(secret, 'garbage', now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, 42, now))).toBe('invalid_proof:malformed');
  });

  it('gives every proof an id, and keeps one it is given (a proof continuing another)', () => {
    const a = verifyProof(secret, signProof(secret, { kind: 'verified' }, 60, now), now);
    const b = verifyProof(secret, signProof(secret, { kind: 'verified' }, 60, now), now);
    expect(a.jti).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(b.jti).not.toBe(a.jti);
    expect(verifyProof(secret, signProof(secret, { kind: 'verified', jti: a.jti }, 60, now), now).jti).toBe(a.jti);
  });

  it('decodes strictly: padding, stray characters or another spelling of the same bytes are refused', () => {
    const token = signProof(secret, { kind: 'verified', uid: 'u1' }, 60, now);
    const [prefix, body, signature] = token.split('.') as [string, string, string];
    expect(reasonOf(() => verifyProof(secret, `${prefix}.${body}.${signature}=`, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, `${prefix}.${body}=.${signature}`, now))).toBe('invalid_proof:malformed');
    expect(
      reasonOf(() => verifyProof(secret, `${prefix}.${body}.${signature.slice(0, 10)}*${signature.slice(10)}`, now)),
    ).toBe('invalid_proof:malformed');
    // The signature is 32 bytes: its last base64url character carries 4 spare bits. Setting one spells the same bytes otherwise.
    const last = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    const respelled = `${prefix}.${body}.${signature.slice(0, -1)}${sibling}`;
    expect(Buffer.from(respelled.split('.')[2]!, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(reasonOf(() => verifyProof(secret, respelled, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, token, now))).toBe('accepted');
  });

  it('refuses a genuine-looking proof without an id', () => {
    const body = Buffer.from(JSON.stringify({ kind: 'verified', uid: 'u1', exp: now / 1000 + 60 })).toString(
      'base64url',
    );
    const key = createHmac('sha256', secret).update('proof-key:v1').digest();
    const mac = createHmac('sha256', key).update(`v1.${body}`).digest('base64url');
    expect(reasonOf(() => verifyProof(secret, `v1.${body}.${mac}`, now))).toBe('invalid_proof:malformed');
  });

  /** Claims signed as signProof signs them, exactly as given (nothing added): what only the secret's holder could make. */
  const signedAsIs = (claims: unknown) => {
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const key = createHmac('sha256', secret).update('proof-key:v1').digest();
    return `v1.${body}.${createHmac('sha256', key).update(`v1.${body}`).digest('base64url')}`;
  };
  const complete = { kind: 'verified', uid: 'u1', jti: 'abcdefghijklmnop', iat: now, exp: now / 1000 + 60 };

  it('accepts correctly signed complete claims, and refuses them lacking only their id, expiry, kind or start', () => {
    expect(reasonOf(() => verifyProof(secret, signedAsIs(complete), now))).toBe('accepted');
    for (const missing of ['jti', 'exp', 'kind', 'iat'] as const) {
      const { [missing]: _gone, ...rest } = complete;
      expect([missing, reasonOf(() => verifyProof(secret, signedAsIs(rest), now))]).toEqual([
        missing,
        'invalid_proof:malformed',
      ]);
    }
  });

  it('refuses correctly signed claims holding an id, expiry, kind or start of the wrong type', () => {
    const wrong = { jti: 12345, exp: String(now / 1000 + 60), kind: ['verified'], iat: String(now) };
    for (const [field, value] of Object.entries(wrong)) {
      expect([field, reasonOf(() => verifyProof(secret, signedAsIs({ ...complete, [field]: value }), now))]).toEqual([
        field,
        'invalid_proof:malformed',
      ]);
    }
  });

  it('refuses correctly signed claims that are not an object, or not JSON', () => {
    for (const claims of [null, 42, 'verified', [complete]])
      expect(reasonOf(() => verifyProof(secret, signedAsIs(claims), now))).toBe('invalid_proof:malformed');
    const body = Buffer.from('{"kind":').toString('base64url');
    const key = createHmac('sha256', secret).update('proof-key:v1').digest();
    expect(
      reasonOf(() =>
        verifyProof(secret, `v1.${body}.${createHmac('sha256', key).update(`v1.${body}`).digest('base64url')}`, now),
      ),
    ).toBe('invalid_proof:malformed');
  });

  it('keeps the start of the chain (iat) it is given, and starts one now when given none', () => {
    const continued = verifyProof(secret, signProof(secret, { kind: 'verified', iat: now - 120_000 }, 60, now), now);
    expect(continued.iat).toBe(now - 120_000);
    expect(continued.exp).toBe(now / 1000 + 60);
    expect(verifyProof(secret, signProof(secret, { kind: 'verified' }, 60, now), now).iat).toBe(now);
    // An expiry in the claims given is replaced by the new one.
    expect(verifyProof(secret, signProof(secret, { kind: 'verified', exp: 1 }, 60, now), now).exp).toBe(
      now / 1000 + 60,
    );
  });

  it('refuses a token over 4,096 characters, genuine or not, and accepts a genuine one just under', () => {
    /** A genuine proof padded by an extra claim to `length` characters. */
    const ofLength = (length: number) => {
      for (let pad = 0; pad < 4096; pad += 1) {
        const token = signProof(secret, { kind: 'verified', jti: 'abcdefghijklmnop', pad: 'x'.repeat(pad) }, 60, now);
        if (token.length === length) return token;
        if (token.length > length) break;
      }
      throw new Error(`no proof of ${length} characters`);
    };
    expect(reasonOf(() => verifyProof(secret, ofLength(4095), now))).toBe('accepted');
    expect(reasonOf(() => verifyProof(secret, ofLength(4097), now))).toBe('invalid_proof:malformed');
  });

  it("refuses another version's prefix, an extra segment, a missing one, and a truncated signature", () => {
    const token = signProof(secret, { kind: 'verified', uid: 'u1' }, 60, now);
    const [, body, signature] = token.split('.') as [string, string, string];
    expect(reasonOf(() => verifyProof(secret, `v2.${body}.${signature}`, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, `${token}.${signature}`, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, `${token}.`, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, `v1.${body}`, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, `v1..${signature}`, now))).toBe('invalid_proof:malformed');
    expect(reasonOf(() => verifyProof(secret, `v1.${body}.`, now))).toBe('invalid_proof:malformed');
    // Cut to its first 31 or 16 bytes, spelt canonically: genuine bytes, but not the 32 of a signature.
    for (const bytes of [31, 16]) {
      const truncated = Buffer.from(signature, 'base64url').subarray(0, bytes).toString('base64url');
      expect(reasonOf(() => verifyProof(secret, `v1.${body}.${truncated}`, now))).toBe('invalid_proof:signature');
    }
  });

  it('accepts a proof until the last millisecond before its expiry, and a kind among several expected', () => {
    const token = signProof(secret, { kind: 'pending' }, 60, now);
    expect(reasonOf(() => verifyProof(secret, token, now + 59_999, ['verified', 'pending']))).toBe('accepted');
    expect(reasonOf(() => verifyProof(secret, token, now + 60_000))).toBe('invalid_proof:expired');
  });

  it('refuses a proof of another kind', () => {
    const token = signProof(secret, { kind: 'pending' }, 60, now);
    expect(reasonOf(() => verifyProof(secret, token, now, ['verified']))).toBe('invalid_proof:kind');
  });

  it('binds only the identifiers it vouches for', () => {
    const claims = { kind: 'verified', uid: 'u1', email: 'Mario@Example.com' };
    expect(proofBinds(claims, { uid: 'u1' })).toBe(true);
    expect(proofBinds(claims, { email: 'mario@example.com' })).toBe(true);
    expect(proofBinds(claims, { uid: 'u2' })).toBe(false);
    expect(proofBinds(claims, { uid: 'u1', email: 'other@example.com' })).toBe(false);
    expect(proofBinds(claims, { phone: '+393331234567' })).toBe(false);
    expect(proofBinds(claims, {})).toBe(false);
  });
});
