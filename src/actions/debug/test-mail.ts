import { z } from 'zod';
import { mailbox } from '../../core/address';
import { apiError, isApiError } from '../../core/errors';
import { maskEmail, maskSecret } from '../../core/logger';
import { defineAction } from '../action';
import { requireDiagnosticsAccess, sampleCode } from './diagnostics';

const address = z.union([z.literal(''), mailbox()]).nullish();

const testMailRequest = z.looseObject({
  /** Recipient; defaults to mail.from_address (a mail to oneself). */
  to: address,
  /** Alias of to. */
  email: address,
});

export const testMail = defineAction({
  name: 'test_mail',
  summary:
    'SMTP diagnostic: sends the OTP mail with a sample code and reports the outcome (x-internal-key only, or in the sandbox).',
  request: testMailRequest,
  reasons: ['proof_required', 'channel_not_configured', 'delivery_failed'],
  async handler(input, ctx) {
    requireDiagnosticsAccess(ctx);
    const { deps } = ctx;
    const mail = deps.config.mail;
    const to = input.to || input.email || mail.from_address;
    const report = {
      channel: 'email',
      configured: deps.otp.mailer.configured,
      smtp: {
        host: mail.host,
        port: mail.port,
        secure: mail.secure,
        user: mail.user.includes('@') ? maskEmail(mail.user) : maskSecret(mail.user),
        from: mail.from_address,
        timeout_seconds: mail.timeout_seconds,
      },
      to: to ? maskEmail(to) : '',
    };
    if (!deps.otp.mailer.configured) {
      throw apiError('channel_not_configured', { data: { ...report, sent: false, outcome: 'not_configured' } });
    }

    const message = deps.otp.message(sampleCode(deps.config.otp.length), ctx.locale);
    const subject = `[test] ${message.subject}`;
    const payload = { to: maskEmail(to), subject, text: message.text };
    try {
      const { messageId, durationMs } = await deps.otp.mailer.send(ctx, {
        to,
        subject,
        html: message.html,
        text: message.text,
      });
      return {
        data: { ...report, sent: true, outcome: 'sent', message_id: messageId, duration_ms: durationMs },
        extra: { payload },
      };
    } catch (err) {
      if (!isApiError(err)) throw err;
      throw apiError('delivery_failed', {
        data: { ...report, sent: false, outcome: 'failed', error: err.message, code: err.data.code ?? null },
        extra: { payload },
      });
    }
  },
});
