import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
import { flowAnswerShape } from '../../flows/answer';
import { otpCodeField } from '../otp/fields';
import { defineAction } from '../action';
import { flowEnum, flowProofField, optionalEmail, optionalPhone, stayLoggedInField } from './fields';

const feVerifyOtpRequest = z
  .object({
    otp_code: otpCodeField
      .optional()
      .describe('required, except with flow `email_phone_declined` ("not my phone" at step 65)'),
    flow: flowEnum.describe('the `flow` of the previous answer, or `email_phone_declined` at step 65'),
    phone: optionalPhone,
    email: optionalEmail,
    uid: z.string().trim().max(128).nullish(),
    stay_logged_in: stayLoggedInField,
    pending_proof: flowProofField(
      'FeRegister phase email_otp (step 23), FeAddPhone (step 62) or FeVerifyOtp (step 65)',
    ),
  })
  .superRefine((request, ctx) => {
    // Declining the phone on file is the one request of this action that carries no code.
    if (request.otp_code === undefined && request.flow !== 'email_phone_declined')
      ctx.addIssue({ code: 'custom', path: ['otp_code'], message: 'is required' });
  })
  .meta({
    anyOf: [
      { required: ['otp_code'] },
      { required: ['flow'], properties: { flow: { const: 'email_phone_declined' } } },
    ],
  });

export const feVerifyOtp = defineAction({
  name: 'FeVerifyOtp',
  rules: [
    'the fields a flow needs at its step: `email` for the email flows, `phone` for the phone flows, the `pending_proof` the previous answer handed out (invalid_proof when it is not that one)',
  ],
  summary:
    'Checks the code of the step the user is on: 14 or 33 log in (90) or continue (24, 37, 61, or 65: a code to the phone on file of an account whose email was never confirmed); 23 continues a registration (25, 37 or 90); 62 saves the new phone (90); 65 keeps the phone on file (90), or with flow email_phone_declined leaves it dropped (61).',
  request: feVerifyOtpRequest,
  response: flowAnswerShape.pick({
    next_step: true,
    flow: true,
    screen: true,
    done: true,
    uid: true,
    phone_hint: true,
    otp: true,
    access_token: true,
    phone_proof: true,
    pending_proof: true,
    register_proof: true,
    proof: true,
  }),
  reasons: [
    'invalid',
    'expired',
    'too_many_attempts',
    'proof_required',
    'invalid_proof',
    'phone_taken',
    'phone_on_hold',
    'user_not_found',
    'already_sent',
    'delivery_failed',
    'channel_not_configured',
    'rate_limited',
    'store_unavailable',
  ],
  handler: (input, ctx) => ctx.flows.run(ACTION_ENTRY.FeVerifyOtp, input, ctx),
});
