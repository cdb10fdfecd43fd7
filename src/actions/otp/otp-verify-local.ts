import { z } from 'zod';
import { defineAction } from '../action';
import { otpCodeField, otpKeyField } from './fields';

const otpVerifyLocalRequest = z.object({
  uid: otpKeyField,
  otp_code: otpCodeField,
});

export const otpVerifyLocal = defineAction({
  name: 'otp_verify_local',
  summary: 'Verifies a one-time code locally only (test aid: no DOI, no session).',
  request: otpVerifyLocalRequest,
  response: z.object({ valid: z.literal(true), reason: z.literal('ok') }),
  reasons: ['expired', 'invalid', 'too_many_attempts', 'store_unavailable'],
  async handler(input, ctx) {
    const { deps } = ctx;
    await deps.otp.verifyOrThrow(ctx, { key: input.uid, code: input.otp_code });
    return { data: { valid: true, reason: 'ok' } };
  },
});
