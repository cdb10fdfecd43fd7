import { z } from 'zod';
import { PHONE_PATTERN } from '../core/phone-pattern';

/*
 * What a request schema says to the OpenAPI document beyond its fields' own types (issue 47):
 * declared on the zod schema the service parses with, so the document is generated from the one
 * definition. The handler's own check stays where it was (its issue's path and text are the
 * contract's); test/docs/document-requests.test.ts holds the two together.
 */

/** At least one of `fields` given as a non-empty string: the handler refuses a request with none. */
export const oneOfGiven = (fields: readonly string[]) => ({
  anyOf: fields.map((field) => ({ required: [field], properties: { [field]: { type: 'string', minLength: 1 } } })),
});

/** A text the service trims and then wants non-empty: the document says it holds a character other than a space. */
export const NOT_BLANK = { pattern: '\\S' } as const;

/** A phone as a request field: what src/domain/phone.ts parses as a valid number, stated for the document. */
export const phoneText = () =>
  z
    .string()
    .trim()
    .max(32)
    .meta({ pattern: PHONE_PATTERN })
    .describe(
      'a mobile number: E.164 (+393331234567), or national in sms.default_region (IT by default); spaces, dots, dashes and brackets between the digits are read too',
    );
