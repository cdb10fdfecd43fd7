import { z } from 'zod';
import { mailbox, recipientKey } from '../../core/address';
import { PHONE_CHANNELS } from '../../core/config/schema';
import { NOT_BLANK, phoneText } from '../document-rules';

/* Request fields shared by the OTP actions. Legacy frontends send null or '' for "absent": both are accepted. */

export const otpKeyField = recipientKey();
export const otpCodeField = z.string().trim().min(1).max(64).meta(NOT_BLANK);
export const phoneField = phoneText();
export const emailField = z.union([z.literal(''), mailbox()]);

/**
 * The language of the code message and of error texts (`it`, `en`, `en-GB`...): on the actions
 * that send a code. One the service has no templates for falls back to Accept-Language, then
 * to mail.default_locale (src/http/locale.ts); only a tag that is no language tag is refused.
 */
export const localeField = z
  .preprocess(
    (v) => (v === '' || v === null ? undefined : v),
    z
      .string()
      .trim()
      .max(35)
      .regex(/^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$/, 'a language tag such as it, en or en-GB')
      .optional(),
  )
  .describe(
    'language of the code message and of error texts (it, en); default: Accept-Language, then mail.default_locale',
  );

/**
 * The bot challenge's solution (docs/security.md, "Bot challenge"): absent until an answer was
 * `challenge_required`; then the same request again with the widget's payload (pow) or token
 * (turnstile, hcaptcha), good for one send of this action to this identifier.
 */
export const challengeField = z
  .preprocess((v) => (v === '' || v === null ? undefined : v), z.string().max(4096).optional())
  .describe(
    'solution of the bot challenge an earlier `challenge_required` answer asked for (data.challenge): the ALTCHA payload, or the Turnstile / hCaptcha token',
  );

/**
 * The phone's channel the caller asks for (`sms`, `whatsapp`), where `sms.channel_choice` lets
 * callers choose and the number's region offers it (`sms.channels`); otherwise `invalid_request`.
 */
export const channelField = z
  .preprocess((v) => (v === '' || v === null ? undefined : v), z.enum(PHONE_CHANNELS).optional())
  .describe(
    "the phone's channel to try first: `sms` or `whatsapp`; only where sms.channel_choice is on and the number's region offers it (sms.channels), else invalid_request. Default: the region's channels in their configured order",
  );

export { otpSendResponse } from '../../domain/otp/send-result';
