import { z } from 'zod';
import { MAILBOX_PATTERN, recipientKey } from '../../core/address';
import { PHONE_PATTERN } from '../../core/phone-pattern';
import { challengeField, channelField, localeField } from './fields';
import { ACTION_ENTRY } from '../../../machines';
import { flowAnswerShape } from '../../flows/answer';
import { defineAction } from '../action';

const feLoginRequest = z.object({
  identifier: recipientKey()
    .meta({ anyOf: [{ pattern: MAILBOX_PATTERN }, { pattern: PHONE_PATTERN }] })
    .describe('an email, or a phone in any form (normalised to E.164)'),
  method: z
    .enum(['otp', 'password'])
    .nullish()
    .describe('`password` (email only) answers step 60 and sends no code; default `otp`'),
  locale: localeField,
  challenge: challengeField,
  channel: channelField,
});

export const feLogin = defineAction({
  name: 'FeLogin',
  rules: [
    '`channel` only where sms.channel_choice is on, for a phone identifier whose region offers that channel (sms.channels)',
  ],
  summary:
    'Starts a login: a phone gets an SMS code (13, next 14), an email a mail code (32, next 33); method password answers 60.',
  request: feLoginRequest,
  response: flowAnswerShape.pick({ next_step: true, flow: true, otp: true }),
  reasons: [
    'already_sent',
    'delivery_failed',
    'channel_not_configured',
    'region_not_allowed',
    'rate_limited',
    'store_unavailable',
    'challenge_required',
  ],
  handler: (input, ctx) => ctx.flows.run(ACTION_ENTRY.FeLogin, input, ctx),
});
