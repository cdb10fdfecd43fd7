import pino, { type Logger } from 'pino';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type { Logger };

/*
 * Fields that may carry secrets if someone ever logs a whole object: censored as a second line
 * of defence, at the top of a line and one level down. The first line is that we never log
 * bodies, headers or configuration wholesale.
 *
 * Done by a log formatter rather than pino's `redact` option: its wildcard paths (`*.token`)
 * cost ~10 µs a line, five times the line itself, on every request line (CHANGELOG.md, 2026-11-23);
 * this scan of the keys a line already has costs ~1 µs and copies only a line that holds a secret.
 */
const SECRET_FIELDS = new Set([
  'otp',
  'code',
  'otp_code',
  'token',
  'access_token',
  'accessToken',
  'refresh_token',
  'api_key',
  'api_token',
  'authorization',
  'password',
  'secret',
]);
const CENSOR = '[redacted]';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Error);

/** `fields` with every secret field censored, itself when it holds none (never modified in place). */
function censorLevel(fields: Record<string, unknown>, depth: number): Record<string, unknown> {
  let out = fields;
  for (const key in fields) {
    const value = fields[key];
    const censored = SECRET_FIELDS.has(key)
      ? CENSOR
      : depth > 0 && isPlainObject(value)
        ? censorLevel(value, depth - 1)
        : value;
    if (censored === value) continue;
    if (out === fields) out = { ...fields };
    out[key] = censored;
  }
  return out;
}

export const censorSecrets = (fields: Record<string, unknown>): Record<string, unknown> => censorLevel(fields, 1);

const formatters = { log: censorSecrets };

/** The service's logger: JSON lines on standard output (or `destination`: tests). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, formatters, base: { service: 'login-frontend-api' } };
  return destination ? pino(options, destination) : pino(options);
}

/** The contract: OTP debug logging goes to its own file with an OTP-specific prefix. */
export function createOtpLogger(file: string, level: string): Logger {
  if (!file || level === 'silent') return pino({ level: 'silent' });
  mkdirSync(dirname(file), { recursive: true });
  return pino(
    { level, formatters, msgPrefix: '[OTP] ', base: { service: 'login-frontend-api', log: 'otp' } },
    pino.destination({ dest: file, sync: false }),
  );
}

/** Phones in logs keep only their last 3 digits. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return digits.length <= 3 ? '***' : `${'*'.repeat(Math.min(digits.length - 3, 12))}${digits.slice(-3)}`;
}

const ONE_MAILBOX = /^[^\s@,;<>()"']+@[^\s@,;<>()"']+$/;

/**
 * Emails in logs keep their first character and domain; anything that is not exactly one
 * mailbox (a list, a display name, no `@`) is masked whole, so no second address shows.
 */
export function maskEmail(email: string): string {
  return ONE_MAILBOX.test(email) ? `${email[0]}***${email.slice(email.indexOf('@'))}` : '***';
}

/** Tokens and keys in diagnostics and logs: a fixed placeholder, none of their characters. */
export function maskSecret(value: string | undefined | null): string {
  return value ? '***' : '';
}
