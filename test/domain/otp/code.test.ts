import { createOtpHasher, generateCode } from '../../../src/domain/otp/code';

describe('generateCode', () => {
  it('gives exactly the configured number of digits', () => {
    for (const length of [4, 6, 10]) {
      for (let i = 0; i < 50; i++) expect(generateCode(length)).toMatch(new RegExp(`^\\d{${length}}$`));
    }
  });

  it('keeps leading zeros', () => {
    const codes = Array.from({ length: 2000 }, () => generateCode(4));
    expect(codes.some((c) => c.startsWith('0'))).toBe(true);
    expect(codes.every((c) => c.length === 4)).toBe(true);
  });

  it('does not repeat itself', () => {
    expect(new Set(Array.from({ length: 200 }, () => generateCode(10))).size).toBe(200);
  });
});

describe('createOtpHasher', () => {
  const hash = createOtpHasher('a-secret');

  it('gives a 64-digit hex HMAC that is stable for a key and code', () => {
    expect(hash('+393331234567', '123456')).toMatch(/^[0-9a-f]{64}$/);
    expect(hash('+393331234567', '123456')).toBe(hash('+393331234567', '123456'));
  });

  it('binds the hash to the key, so it cannot be moved to another key', () => {
    expect(hash('+393331234567', '123456')).not.toBe(hash('+393331234568', '123456'));
  });

  it('depends on the secret', () => {
    expect(createOtpHasher('another-secret')('k', '123456')).not.toBe(hash('k', '123456'));
  });

  it('is not a plain hash of the code', () => {
    expect(hash('k', '123456')).not.toContain('123456');
  });
});
