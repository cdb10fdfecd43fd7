import { isE164, looksLikePhone, regionOf, samePhone, toE164, toStoredDigits } from '../../src/domain/phone';

describe('phones', () => {
  it('normalises national and international forms to E.164', () => {
    expect(toE164('333 123 4567', 'IT')).toBe('+393331234567');
    expect(toE164('+39 333 1234567', 'IT')).toBe('+393331234567');
    expect(toE164('393331234567', 'IT')).toBe('+393331234567');
    expect(toE164('+44 7911 123456', 'IT')).toBe('+447911123456');
  });

  it('refuses what is not a phone', () => {
    expect(toE164('hello', 'IT')).toBeNull();
    expect(toE164('123', 'IT')).toBeNull();
    expect(toE164('a@b.it', 'IT')).toBeNull();
  });

  it('compares stored digits with typed numbers', () => {
    expect(samePhone('393331234567', '+39 333 123 4567', 'IT')).toBe(true);
    expect(samePhone('3331234567', '+393331234567', 'IT')).toBe(true);
    expect(samePhone('3331234568', '+393331234567', 'IT')).toBe(false);
    expect(toStoredDigits('+393331234567')).toBe('393331234567');
  });

  it('tells the region and whether an identifier is a phone', () => {
    expect(regionOf('+393331234567')).toBe('IT');
    expect(looksLikePhone('+39 333 1234567')).toBe(true);
    expect(looksLikePhone('mario@example.it')).toBe(false);
  });
});

describe('isE164 and normalisation', () => {
  // The OTP check looks an E.164-written key up as given (src/domain/otp/service.ts): sound only
  // because a normalised phone normalises to itself.
  const typed = [
    '+39 333 1234567',
    '3331234567',
    '0612345678',
    '+447911123456',
    '+4407911123456',
    '+330612345678',
    '+1 202 555 0123',
    '+49 1512 3456789',
    '+81 90 1234 5678',
    '+61 412 345 678',
    '+55 11 91234 5678',
    '+91 98765 43210',
    '+3906123456',
  ];
  it.each(typed)('normalises %s to an E.164 string that normalises to itself', (input) => {
    const e164 = toE164(input, 'IT');
    expect(e164).not.toBeNull();
    expect(isE164(e164!)).toBe(true);
    expect(toE164(e164!, 'IT')).toBe(e164);
    expect(toE164(e164!, 'US')).toBe(e164);
  });

  it('tells E.164 from other spellings', () => {
    expect(['+393331234567', '+12025550123'].map(isE164)).toEqual([true, true]);
    expect(
      ['393331234567', '+39 333 1234567', '+0393331234567', '+39333123456789012', 'a@b.it', ''].map(isE164),
    ).toEqual([false, false, false, false, false, false]);
  });
});
