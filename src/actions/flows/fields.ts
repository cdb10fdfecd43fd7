import { z } from 'zod';
import { FLOWS } from '../../../machines';
import { proofField as verifiedProofField } from '../identity/fields';

/* Request fields shared by the optimised actions. Phones are normalised to E.164 by the runner (src/flows), which knows the region. */

const blankToUndefined = (value: unknown) => (value === '' || value === null ? undefined : value);

export const flowEnum = z.enum(FLOWS);
export const flowField = z.preprocess(blankToUndefined, flowEnum.optional());
export const stayLoggedInField = z.boolean().nullish();

/** A signed proof an earlier answer handed out (docs/flows-http.md says which answer, and which field). */
export const flowProofField = (answeredBy: string) =>
  z.preprocess(blankToUndefined, z.string().max(4096).optional()).describe(`signed proof from ${answeredBy}`);

/** The `verified` proof of step 61 or 90; also accepted as header x-verification-proof, like the identity primitives'. */
export const proofField = verifiedProofField.describe(
  'signed `verified` proof from the answer at step 61 or 90; also accepted as header x-verification-proof',
);

export { emailField, optionalDate, optionalEmail, optionalPhone, optionalText, uidField } from '../identity/fields';
export { challengeField, channelField, localeField } from '../otp/fields';
