import { z } from 'zod';

/* Request fields shared by the OTP actions. Legacy frontends send null or '' for "absent": both are accepted. */

export const otpKeyField = z.string().trim().min(1).max(254);
export const otpCodeField = z.string().trim().min(1).max(64);
export const phoneField = z.string().trim().max(32);
export const emailField = z.union([z.literal(''), z.string().trim().max(254).pipe(z.email())]);

export { otpSendResponse } from '../../domain/otp/send-result';
