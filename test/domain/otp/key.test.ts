import { createKeyNormaliser, maskOtpKey, normaliseOtpKey } from '../../../src/domain/otp/key';

describe('normaliseOtpKey', () => {
  it('turns every spelling of one phone into one E.164 key', () => {
    const spellings = ['+39 333 123 4567', '393331234567', '3331234567', '0039 333 1234567', ' +39-333-1234567 '];
    for (const raw of spellings) expect(normaliseOtpKey(raw, 'IT')).toEqual({ value: '+393331234567', kind: 'phone' });
  });

  it('trims and lower-cases an email', () => {
    expect(normaliseOtpKey('  Mario.Rossi@Example.COM ', 'IT')).toEqual({
      value: 'mario.rossi@example.com',
      kind: 'email',
    });
  });

  it('gives null for something that looks like a phone but is not one', () => {
    expect(normaliseOtpKey('12345', 'IT')).toBeNull();
  });

  it('keeps any other identifier as trimmed text, its case and inner spaces kept', () => {
    expect(normaliseOtpKey(' user-42 ', 'IT')).toEqual({ value: 'user-42', kind: 'other' });
    expect(normaliseOtpKey('PNIa7Xk2mR0ssi', 'IT')).toEqual({ value: 'PNIa7Xk2mR0ssi', kind: 'other' });
    expect(normaliseOtpKey('Mario Rossi', 'IT')).toEqual({ value: 'Mario Rossi', kind: 'other' });
    // Too short, or letters among the digits: not a phone, a plain key.
    expect(normaliseOtpKey('1234', 'IT')).toEqual({ value: '1234', kind: 'other' });
    expect(normaliseOtpKey('333-CALL-ME', 'IT')).toEqual({ value: '333-CALL-ME', kind: 'other' });
  });

  it('reads a phone written with separators (spaces, dots, dashes, brackets) as its E.164 number', () => {
    for (const raw of ['+39 (333) 123.4567', '0039.333.123.4567', '333.123.4567', '+39-333 123 45 67'])
      expect([raw, normaliseOtpKey(raw, 'IT')]).toEqual([raw, { value: '+393331234567', kind: 'phone' }]);
    // Another default region reads the national spelling as its own.
    expect(normaliseOtpKey('202 555-0123', 'US')).toEqual({ value: '+12025550123', kind: 'phone' });
    // A phone starts with + or a digit: one opening with a bracket is a plain key, kept as written.
    expect(normaliseOtpKey('(202) 555-0123', 'US')).toEqual({ value: '(202) 555-0123', kind: 'other' });
  });

  it('keeps at most 512 answers, emptying them when full, and answers the same afterwards', () => {
    const italian = createKeyNormaliser('IT');
    const first = italian('3331234567');
    // 511 more fill it (512 with the first): the first is still the same object.
    for (let i = 0; i < 511; i++) italian(`33312${String(i).padStart(5, '0')}`);
    expect(italian('3331234567')).toBe(first);
    // One more empties it: the first is parsed again, equal but a new object.
    italian('3339999999');
    const again = italian('3331234567');
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    // Answers are frozen: a caller cannot change what the next one gets.
    expect(Object.isFrozen(again)).toBe(true);
    expect(italian('12345')).toBeNull();
    expect(italian('12345')).toBeNull();
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

  it('shows nothing of a plain key, not even its last characters, and an empty key as masked too', () => {
    // A plain key is a secret of the caller's (a session or order id): unlike a phone, no digit of it is kept.
    for (const key of ['PNIa7Xk2mR0ssi', 'order-42', 'order-20261128-4711', ''])
      expect([key, maskOtpKey(key)]).toEqual([key, '***']);
  });
});
