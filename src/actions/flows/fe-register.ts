import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
import { flowAnswerShape } from '../../flows/answer';
import { defineAction } from '../action';
import {
  challengeField,
  emailField,
  flowField,
  flowProofField,
  localeField,
  optionalDate,
  optionalPhone,
  optionalText,
} from './fields';

const feRegisterRequest = z.object({
  email: emailField,
  phone: optionalPhone,
  consents: z.record(z.string(), z.unknown()).nullish().describe('free keys, e.g. terms_conditions (boolean)'),
  otp: z.boolean().nullish().describe('phase email_otp always sends the email code (step 23 needs it)'),
  flow: flowField,
  is_magic_link_sent: z.boolean().nullish(),
  phase: z.preprocess((v) => (v === '' || v === null ? undefined : v), z.enum(['email_otp', 'register']).optional()),
  phone_proof: flowProofField(
    'FeVerifyOtp at step 24 (phone verified, no account); without it phase email_otp starts an email-only registration',
  ),
  register_proof: flowProofField('FeVerifyOtp at step 25 or 37'),
  first_name: optionalText,
  last_name: optionalText,
  birth_date: optionalDate,
  city: optionalText,
  locale: localeField,
  challenge: challengeField,
});

export const feRegister = defineAction({
  name: 'FeRegister',
  summary:
    'Phase email_otp sends the email code (next 23, pending_proof); phase register registers, confirms DOI (36), saves the profile (40, 42) and logs in (90).',
  request: feRegisterRequest,
  response: flowAnswerShape.pick({
    next_step: true,
    flow: true,
    otp: true,
    pending_proof: true,
    screen: true,
    done: true,
    uid: true,
    access_token: true,
    proof: true,
  }),
  reasons: [
    'proof_required',
    'invalid_proof',
    'phone_taken',
    'already_sent',
    'delivery_failed',
    'channel_not_configured',
    'rate_limited',
    'store_unavailable',
    'user_not_found',
    'challenge_required',
  ],
  handler: (input, ctx) => ctx.flows.run(ACTION_ENTRY.FeRegister, input, ctx),
});
