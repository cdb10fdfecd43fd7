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
    expect(verifyProof(secret, token, now + 899_000)).toMatchObject({ kind: 'verified', phone: '+393331234567', flow: 'phone', exp: now / 1000 + 900 });
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
    expect(reasonOf(() => verifyProof(secret, `${prefix}.${body}.${signature.slice(0, 10)}*${signature.slice(10)}`, now))).toBe('invalid_proof:malformed');
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
    const body = Buffer.from(JSON.stringify({ kind: 'verified', uid: 'u1', exp: now / 1000 + 60 })).toString('base64url');
    const key = createHmac('sha256', secret).update('proof-key:v1').digest();
    const mac = createHmac('sha256', key).update(`v1.${body}`).digest('base64url');
    expect(reasonOf(() => verifyProof(secret, `v1.${body}.${mac}`, now))).toBe('invalid_proof:malformed');
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
