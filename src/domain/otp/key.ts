import { looksLikePhone, toE164 } from '../phone';
import { maskEmail, maskPhone, maskSecret } from '../../core/logger';

/*
 * An OTP key is whatever the caller chose (the contract: "a phone or an email"). Keys are
 * normalised so every spelling of one identity lands on one record: a phone in any form becomes
 * E.164 (`+39 333 1234567`, `393331234567` and `3331234567` with region IT are one key), an
 * email is trimmed and lower-cased, anything else is only trimmed.
 */

type OtpKeyKind = 'phone' | 'email' | 'other';

export interface OtpKey {
  value: string;
  kind: OtpKeyKind;
}

/*
 * Parsing a phone is the dearest step of a code check (libphonenumber: tens of µs under load),
 * and one request normalises its key more than once. A normaliser keeps its last few hundred
 * answers (emptied when full); each OTP service owns one, so nothing is shared between apps.
 */
const RECENT_LIMIT = 512;

export type KeyNormaliser = (raw: string) => Readonly<OtpKey> | null;

/** Normalises keys for one default region: the key, or null when it looks like a phone but is not a valid one. */
export function createKeyNormaliser(defaultRegion: string): KeyNormaliser {
  const recent = new Map<string, Readonly<OtpKey> | null>();
  return (raw) => {
    const known = recent.get(raw);
    if (known !== undefined) return known;
    const key = parseOtpKey(raw, defaultRegion);
    if (recent.size >= RECENT_LIMIT) recent.clear();
    recent.set(raw, key && Object.freeze(key));
    return key;
  };
}

/** The normalised key, uncached (tests, one-off callers). */
export const normaliseOtpKey = (raw: string, defaultRegion: string): Readonly<OtpKey> | null =>
  parseOtpKey(raw, defaultRegion);

function parseOtpKey(raw: string, defaultRegion: string): OtpKey | null {
  const trimmed = raw.trim();
  if (trimmed.includes('@')) return { value: trimmed.toLowerCase(), kind: 'email' };
  if (looksLikePhone(trimmed)) {
    const e164 = toE164(trimmed, defaultRegion);
    return e164 ? { value: e164, kind: 'phone' } : null;
  }
  return { value: trimmed, kind: 'other' };
}

/** A key as it may appear in logs and diagnostics. */
export function maskOtpKey(key: string): string {
  if (key.includes('@')) return maskEmail(key);
  if (looksLikePhone(key)) return maskPhone(key);
  return maskSecret(key) || '***';
}
