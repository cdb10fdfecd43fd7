import { z } from 'zod';
import { oneOfGiven } from '../document-rules';
import { defineAction } from '../action';
import {
  challengeField,
  channelField,
  emailField,
  localeField,
  otpKeyField,
  otpSendResponse,
  phoneField,
} from './fields';

const otpGenerateRequest = z
  .object({
    /** The OTP key: a phone or an email. */
    uid: otpKeyField,
    phone: phoneField.nullish(),
    notify_email: emailField.nullish(),
    /** Backward-compatible alias of notify_email. */
    email: emailField.nullish(),
    locale: localeField,
    challenge: challengeField,
    channel: channelField,
  })
  .meta({
    // Where to send: the phone, a mail address, or the key itself when it is one.
    anyOf: [
      ...oneOfGiven(['phone', 'notify_email', 'email']).anyOf,
      { required: ['uid'], properties: { uid: { type: 'string', pattern: '@|^[+\\d][\\d ().-]{3,23}[\\d().-]$' } } },
    ],
    // A channel is a phone's: a code that goes by mail is refused one (null stands for absent, so not dependentRequired).
    if: { required: ['channel'], properties: { channel: { type: 'string' } } },
    then: { required: ['phone'], properties: { phone: { type: 'string' } } },
  });

export const otpGenerate = defineAction({
  name: 'otp_generate',
  summary:
    'Generates a one-time code for a key and sends it by SMS and/or email (who receives it: docs/contract.md#one-time-codes).',
  rules: ["`channel` only where sms.channel_choice is on and the phone's region offers that channel (sms.channels)"],
  request: otpGenerateRequest,
  response: otpSendResponse,
  reasons: [
    'already_sent',
    'delivery_failed',
    'channel_not_configured',
    'region_not_allowed',
    'store_unavailable',
    'challenge_required',
  ],
  async handler(input, ctx) {
    const { deps } = ctx;
    const sent = await deps.otp.generate(ctx, {
      key: input.uid,
      phone: input.phone || undefined,
      email: input.notify_email || input.email || undefined,
      channel: input.channel,
      fields: { email: input.notify_email ? 'notify_email' : 'email' },
    });
    return { data: { ...sent } };
  },
});
