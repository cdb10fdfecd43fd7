import { z } from 'zod';
import type { OtpSendMetadata } from '../../../machines/effects';

/** otp_generate's success data (docs/contract.md#one-time-codes), also the `otp` of the login journeys' answers. */
export const otpSendResponse = z.object({
  otp: z.string().optional().describe('the plain code, only when otp.debug is on'),
  resent: z.boolean(),
  retry_after: z.number().int(),
  cooldown: z.number().int(),
  expires_in: z.number().int(),
  notified: z.object({ email: z.boolean(), sms: z.boolean() }),
  fallback: z.literal('email').optional().describe("present when the last SMS to this phone failed to deliver or had no receipt in time, so this code also went to the account's confirmed email"),
}) satisfies z.ZodType<OtpSendMetadata>;
