import { z } from 'zod';

/* Request fields shared by the OTP actions. Legacy frontends send null or '' for "absent": both are accepted. */

export const otpKeyField = z.string().trim().min(1).max(254);
export const otpCodeField = z.string().trim().min(1).max(64);
export const phoneField = z.string().trim().max(32);
export const emailField = z.union([z.literal(''), z.string().trim().max(254).pipe(z.email())]);

export const otpSendResponse = z.object({
  otp: z.string().optional().describe('the plain code, only when otp.debug is on'),
  resent: z.boolean(),
  retry_after: z.number().int(),
  cooldown: z.number().int(),
  expires_in: z.number().int(),
  notified: z.object({ email: z.boolean(), sms: z.boolean() }),
});
