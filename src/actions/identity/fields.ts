import { z } from 'zod';
import { ApiError } from '../../core/errors';
import { toE164 } from '../../domain/phone';

/* Request fields shared by the identity actions. Legacy frontends send null or '' for "absent": both mean absent. */

const blankToUndefined = (value: unknown) => (value === '' || value === null ? undefined : value);

export const uidField = z.string().trim().min(1).max(128);
export const emailField = z.string().trim().max(254).pipe(z.email());
export const optionalEmail = z.preprocess(blankToUndefined, emailField.optional());
export const optionalText = z.preprocess(blankToUndefined, z.string().trim().max(200).optional());
export const optionalPhone = z.preprocess(blankToUndefined, z.string().trim().max(32).optional());
export const optionalDate = z.preprocess(blankToUndefined, z.iso.date().optional());
/** A verification proof (issued by verify_otp and the identity actions); also accepted as header `x-verification-proof`. */
export const proofField = z.string().max(4096).nullish().describe('verification proof; also accepted as header x-verification-proof');

/** E.164 of a phone field, or `invalid_request` naming the field. */
export function requirePhone(phone: string, field: string, defaultRegion: string): string {
  const e164 = toE164(phone, defaultRegion);
  if (!e164) {
    throw new ApiError('invalid_request', 'Numero di telefono non valido.', { data: { issues: [{ path: field, message: 'not a valid phone number' }] } });
  }
  return e164;
}
