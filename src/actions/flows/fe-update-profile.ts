import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
import { flowAnswerShape } from '../../flows/answer';
import { defineAction } from '../action';
import {
  optionalDate,
  optionalEmail,
  optionalPhone,
  optionalText,
  proofField,
  stayLoggedInField,
  uidField,
} from './fields';

const feUpdateProfileRequest = z.object({
  uid: uidField,
  first_name: optionalText,
  last_name: optionalText,
  birth_date: optionalDate,
  city: optionalText,
  otp_phone: optionalPhone.describe('must be the phone the proof vouches for; checked against other uids first'),
  email: optionalEmail.describe(
    'changed only for a trusted caller (x-internal-key); with a proof it must be the proof’s',
  ),
  stay_logged_in: stayLoggedInField,
  proof: proofField,
});

export const feUpdateProfile = defineAction({
  name: 'FeUpdateProfile',
  summary:
    'Saves identity (40) and custom (42) fields, issues the token (cookie __utp) and queues the ingest: 90, done, screen success.',
  request: feUpdateProfileRequest,
  response: flowAnswerShape.pick({
    next_step: true,
    flow: true,
    screen: true,
    done: true,
    uid: true,
    access_token: true,
    proof: true,
  }),
  reasons: ['phone_taken', 'phone_not_verified', 'proof_required', 'invalid_proof', 'user_not_found'],
  handler: (input, ctx) => ctx.flows.run(ACTION_ENTRY.FeUpdateProfile, input, ctx),
});
