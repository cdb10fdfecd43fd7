import { z } from 'zod';
import { mailbox } from '../../core/address';
import { NOT_BLANK, phoneText } from '../document-rules';

/* Request fields shared by the identity actions. Legacy frontends send null or '' for "absent": both mean absent. */

const blankToUndefined = (value: unknown) => (value === '' || value === null ? undefined : value);

export const uidField = z.string().trim().min(1).max(128).meta(NOT_BLANK);
export const emailField = mailbox();
export const optionalEmail = z.preprocess(blankToUndefined, emailField.optional());
export const optionalText = z.preprocess(blankToUndefined, z.string().trim().max(200).optional());
export const optionalPhone = z.preprocess(blankToUndefined, phoneText().optional());
export const optionalDate = z.preprocess(blankToUndefined, z.iso.date().optional());
/** A verification proof (issued by verify_otp and the identity actions); also accepted as header `x-verification-proof`. */
export const proofField = z
  .string()
  .max(4096)
  .nullish()
  .describe('verification proof; also accepted as header x-verification-proof');

export { requirePhone } from '../../domain/phone';
