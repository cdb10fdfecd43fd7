import { createHmac, randomInt } from 'node:crypto';

/** A uniformly random numeric code of `length` digits, leading zeros kept (`012345`). */
export function generateCode(length: number): string {
  // randomInt's range must stay below 2^48: ten digits is 1e10, well inside.
  return randomInt(0, 10 ** length)
    .toString()
    .padStart(length, '0');
}

export type OtpHasher = (key: string, code: string) => string;

/**
 * Codes are stored only as HMAC-SHA256 (hex) under a key derived from the service secret, so a
 * leaked store reveals no code and the secret itself is used for one purpose only. The OTP key
 * is part of the message: a hash copied to another key never matches there.
 */
export function createOtpHasher(secret: string): OtpHasher {
  const otpKey = createHmac('sha256', secret).update('otp-key:v1').digest();
  return (key, code) => createHmac('sha256', otpKey).update(`${key}\n${code}`).digest('hex');
}
