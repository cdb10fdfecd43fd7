import pino, { type Logger } from 'pino';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type { Logger };

/*
 * Paths that may carry secrets if someone ever logs a whole object: redacted as a second line of
 * defence. The first line is that we never log bodies, headers or configuration wholesale.
 */
const redact = {
  paths: [
    'otp', '*.otp', 'code', '*.code', 'otp_code', '*.otp_code', 'token', '*.token', 'access_token', '*.access_token',
    'accessToken', '*.accessToken', 'refresh_token', '*.refresh_token', 'api_key', '*.api_key', 'api_token',
    '*.api_token', 'authorization', '*.authorization', 'password', '*.password', 'secret', '*.secret',
  ],
  censor: '[redacted]',
};

export function createLogger(level: string): Logger {
  return pino({ level, redact, base: { service: 'login-frontend-api' } });
}

/** The contract: OTP debug logging goes to its own file with an OTP-specific prefix. */
export function createOtpLogger(file: string, level: string): Logger {
  if (!file || level === 'silent') return pino({ level: 'silent' });
  mkdirSync(dirname(file), { recursive: true });
  return pino({ level, redact, msgPrefix: '[OTP] ', base: { service: 'login-frontend-api', log: 'otp' } }, pino.destination({ dest: file, sync: false }));
}

/** Phones in logs keep only their last 3 digits. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return digits.length <= 3 ? '***' : `${'*'.repeat(Math.min(digits.length - 3, 12))}${digits.slice(-3)}`;
}

/** Emails in logs keep their first character and domain. */
export function maskEmail(email: string): string {
  const at = email.indexOf('@');
  return at <= 0 ? '***' : `${email[0]}***${email.slice(at)}`;
}

/** Tokens and keys in diagnostics show their length and last 4 characters at most. */
export function maskSecret(value: string | undefined | null): string {
  if (!value) return '';
  return value.length <= 8 ? '***' : `***${value.slice(-4)}`;
}
