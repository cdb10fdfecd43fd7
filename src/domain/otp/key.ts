import { looksLikePhone, toE164 } from '../phone';
import { maskEmail, maskPhone, maskSecret } from '../../core/logger';

/*
 * An OTP key is whatever the caller chose (SPEC: "a phone number or an email"). Keys are
 * normalised so every spelling of one identity lands on one record: a phone in any form becomes
 * E.164 (`+39 333 1234567`, `393331234567` and `3331234567` with region IT are one key), an
 * email is trimmed and lower-cased, anything else is only trimmed.
 */

export type OtpKeyKind = 'phone' | 'email' | 'other';

export interface OtpKey {
  value: string;
  kind: OtpKeyKind;
}

/*
 * Parsing a phone is the dearest step of a code check (libphonenumber: tens of µs under load),
 * and one request normalises its key more than once (verify_otp's handler, then the OTP
 * service). The last few hundred answers are kept; the cache is simply emptied when full.
 */
const RECENT_LIMIT = 512;
const recent = new Map<string, Map<string, Readonly<OtpKey> | null>>();

/** The normalised key, or null when it looks like a phone but is not a valid one. */
export function normaliseOtpKey(raw: string, defaultRegion: string): Readonly<OtpKey> | null {
  let byRegion = recent.get(defaultRegion);
  if (!byRegion) recent.set(defaultRegion, (byRegion = new Map()));
  const known = byRegion.get(raw);
  if (known !== undefined) return known;
  const key = parseOtpKey(raw, defaultRegion);
  if (byRegion.size >= RECENT_LIMIT) byRegion.clear();
  byRegion.set(raw, key && Object.freeze(key));
  return key;
}

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
