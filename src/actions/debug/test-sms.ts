import { z } from 'zod';
import { oneOfGiven, phoneText } from '../document-rules';
import { apiError, isApiError } from '../../core/errors';
import { maskPhone, maskSecret } from '../../core/logger';
import { invalidField } from '../../domain/otp/errors';
import { defineAction } from '../action';
import { PHONE_PATTERN } from '../../core/phone-pattern';
import { requireDiagnosticsAccess, safeUrl, sampleCode } from './diagnostics';

const PHONE = new RegExp(PHONE_PATTERN);

const testSmsRequest = z
  .looseObject({
    phone: phoneText().nullish(),
    /** Alias of phone. */
    to: phoneText().nullish(),
  })
  .meta(oneOfGiven(['phone', 'to']));

export const testSms = defineAction({
  name: 'test_sms',
  summary:
    'SMS gateway diagnostic: sends the OTP template with a sample code and reports the outcome (x-internal-key only, or in the sandbox); the rules of a real send apply.',
  request: testSmsRequest,
  reasons: [
    'proof_required',
    'channel_not_configured',
    'delivery_failed',
    'region_not_allowed',
    'phone_not_mobile',
    'rate_limited',
  ],
  async handler(input, ctx) {
    requireDiagnosticsAccess(ctx);
    const { deps } = ctx;
    const sms = deps.config.sms;
    const raw = input.phone || input.to;
    if (!raw) throw invalidField('phone', 'give the phone to send the test SMS to');
    // The alias beside the field is not the number used, yet the document holds it to the same rule: so does the service.
    if (input.phone && input.to && !PHONE.test(input.to)) throw invalidField('to', 'not a mobile number');
    // The rules of a real send (mobile only, allowed regions, the per-recipient cap): a diagnostic is no way around them.
    const receiver = await deps.otp.smsRecipient(raw, input.phone ? 'phone' : 'to');

    const body = deps.otp.message(sampleCode(deps.config.otp.length), ctx.locale).sms;
    const report = {
      channel: 'sms',
      configured: deps.otp.sms.configured,
      gateway: {
        url: safeUrl(sms.api_url),
        api_key: maskSecret(sms.api_key),
        sender: sms.sender,
        timeout_seconds: sms.timeout_seconds,
      },
      // With sms.providers, which ones the message may go to and whether each is skipped now (its circuit).
      providers: deps.sms.router.breakerStates(),
      to: maskPhone(receiver),
    };
    const payload = { receiver: maskPhone(receiver), body, sender: sms.sender };
    if (!deps.otp.sms.configured) {
      throw apiError('channel_not_configured', {
        data: { ...report, sent: false, outcome: 'not_configured' },
        extra: { payload },
      });
    }
    try {
      const { status, durationMs, provider } = await deps.otp.sms.send(ctx, { to: receiver, body });
      return {
        data: { ...report, sent: true, outcome: 'sent', provider, upstream_status: status, duration_ms: durationMs },
        extra: { payload },
      };
    } catch (err) {
      if (!isApiError(err)) throw err;
      const upstreamStatus = typeof err.data.upstream_status === 'number' ? err.data.upstream_status : 0;
      throw apiError('delivery_failed', {
        data: { ...report, sent: false, outcome: 'failed', upstream_status: upstreamStatus, error: err.message },
        extra: { payload },
      });
    }
  },
});
