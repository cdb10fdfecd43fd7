import { createKeyNormaliser, maskOtpKey, normaliseOtpKey } from '../../../src/domain/otp/key';

describe('normaliseOtpKey', () => {
  it('turns every spelling of one phone into one E.164 key', () => {
    const spellings = ['+39 333 123 4567', '393331234567', '3331234567', '0039 333 1234567', ' +39-333-1234567 '];
    for (const raw of spellings) expect(normaliseOtpKey(raw, 'IT')).toEqual({ value: '+393331234567', kind: 'phone' });
  });

  it('trims and lower-cases an email', () => {
    expect(normaliseOtpKey('  Mario.Rossi@Example.COM ', 'IT')).toEqual({ value: 'mario.rossi@example.com', kind: 'email' });
  });

  it('gives null for something that looks like a phone but is not one', () => {
    expect(normaliseOtpKey('12345', 'IT')).toBeNull();
  });

  it('keeps any other identifier as trimmed text', () => {
    expect(normaliseOtpKey(' user-42 ', 'IT')).toEqual({ value: 'user-42', kind: 'other' });
  });

  it('gives the same answer to a key asked again, also after many other keys, from a normaliser of its own region', () => {
    const italian = createKeyNormaliser('IT');
    const first = italian('3331234567');
    expect(italian('3331234567')).toBe(first);
    for (let i = 0; i < 1000; i++) italian(`33312${String(i).padStart(5, '0')}`);
    expect(italian('3331234567')).toEqual(first);
    expect(createKeyNormaliser('US')('3331234567')).toBeNull();
  });
});

describe('maskOtpKey', () => {
  it('keeps only the last digits of a phone and the first letter and domain of an email', () => {
    expect(maskOtpKey('+393331234567')).toBe('*********567');
    expect(maskOtpKey('mario@example.com')).toBe('m***@example.com');
  });
});
