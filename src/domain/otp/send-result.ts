import { z } from 'zod';
import type { OtpSendMetadata } from '../../../machines/effects';

/** otp_generate's success data (docs/contract.md#one-time-codes), also the `otp` of the login journeys' answers. */
export const otpSendResponse = z.object({
  otp: z.string().optional().describe('the plain code, only when otp.debug is on'),
  resent: z.boolean(),
  retry_after: z.number().int(),
  cooldown: z.number().int(),
  expires_in: z.number().int(),
  notified: z.object({
    email: z.boolean(),
    sms: z.boolean().describe('the phone got the code, by SMS or WhatsApp (see channel)'),
    channel: z
      .enum(['sms', 'whatsapp'])
      .optional()
      .describe('how the phone got the code, when it did: `whatsapp` ("ti abbiamo scritto su WhatsApp") or `sms`'),
  }),
  fallback: z
    .enum(['email', 'sms', 'whatsapp'])
    .optional()
    .describe(
      "`email`: the last SMS to this phone failed to deliver or had no receipt in time, so this code also went to the account's confirmed email. `sms` (or `whatsapp`): the code went by another channel than the phone's first, because that one refused it (not on WhatsApp, a template rejected, its providers down) or its last message there was not read in time",
    ),
}) satisfies z.ZodType<OtpSendMetadata>;
