import { looksLikePhone, regionOf, samePhone, toE164, toStoredDigits } from '../../src/domain/phone';

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
