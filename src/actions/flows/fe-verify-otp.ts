import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
import { flowAnswerShape } from '../../flows/answer';
import { otpCodeField } from '../otp/fields';
import { defineAction } from '../action';
import { flowEnum, flowProofField, optionalEmail, optionalPhone, stayLoggedInField } from './fields';

export const feVerifyOtpRequest = z.object({
  otp_code: otpCodeField,
  flow: flowEnum.describe('the `flow` of the previous answer'),
  phone: optionalPhone,
  email: optionalEmail,
  uid: z.string().trim().max(128).nullish(),
  stay_logged_in: stayLoggedInField,
  pending_proof: flowProofField('FeRegister phase email_otp (step 23) or FeAddPhone (step 62)'),
});

export const feVerifyOtp = defineAction({
  name: 'FeVerifyOtp',
  summary: 'Checks the code of the step the user is on: 14 or 33 log in (90) or continue (24, 37, 61); 23 continues a registration (25, 37 or 90); 62 saves the new phone (90).',
  request: feVerifyOtpRequest,
  response: flowAnswerShape.pick({ next_step: true, flow: true, screen: true, done: true, uid: true, access_token: true, phone_proof: true, register_proof: true, proof: true }),
  reasons: ['invalid', 'expired', 'too_many_attempts', 'proof_required', 'invalid_proof', 'phone_taken', 'user_not_found', 'rate_limited', 'store_unavailable'],
  handler: (input, ctx) => ctx.flows.run(ACTION_ENTRY.FeVerifyOtp, input, ctx),
});
