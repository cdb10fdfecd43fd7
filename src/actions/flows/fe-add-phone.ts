import { z } from 'zod';
import { phoneText } from '../document-rules';
import { ACTION_ENTRY } from '../../../machines';
import { flowAnswerShape } from '../../flows/answer';
import { defineAction } from '../action';
import { challengeField, channelField, localeField, optionalEmail, proofField } from './fields';

const feAddPhoneRequest = z.object({
  phone: phoneText().min(1).describe('the phone to add, any form (normalised to E.164)'),
  uid: z.string().trim().max(128).nullish(),
  email: optionalEmail,
  flow: z.preprocess(
    (v) => (v === '' || v === null ? undefined : v),
    z.enum(['email_add_phone', 'email_register_phone']).optional(),
  ),
  proof: proofField,
  locale: localeField,
  challenge: challengeField,
  channel: channelField,
});

export const feAddPhone = defineAction({
  name: 'FeAddPhone',
  summary:
    'Checks the phone is held by no other account (phone_taken), then sends it an SMS code: next 62, screen otp_phone.',
  request: feAddPhoneRequest,
  response: flowAnswerShape.pick({
    next_step: true,
    flow: true,
    screen: true,
    uid: true,
    otp: true,
    pending_proof: true,
  }),
  reasons: [
    'phone_taken',
    'proof_required',
    'invalid_proof',
    'already_sent',
    'delivery_failed',
    'channel_not_configured',
    'region_not_allowed',
    'rate_limited',
    'store_unavailable',
    'challenge_required',
  ],
  handler: (input, ctx) => ctx.flows.run(ACTION_ENTRY.FeAddPhone, input, ctx),
});
