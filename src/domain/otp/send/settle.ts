import { budgetOf } from '../../../core/address';
import { isApiError } from '../../../core/errors';
import { maskOtpKey } from '../key';
import { deliveryFailed } from '../errors';
import { releaseRecipients } from './plan';
import { guarded, type Delivered, type OtpSendResult, type Send, type SendEnv } from './types';

/*
 * The last step of a send: the books after delivery (the record taken back when nobody received
 * the code, cooldowns given back to channels that failed, the ledger's record of a mail), and
 * the answer.
 */

/** Settles what the delivery did; throws `delivery_failed` when no channel took the code. */
export async function settle(env: SendEnv, send: Send, delivered: Delivered): Promise<void> {
  const { key, smsTo, emailTo, token, issued } = send;
  if (!delivered.sms && !delivered.email) {
    // Nobody received this code: put the previous record back, so no cooldown is charged.
    await guarded(() => env.store.revert(key, send.codeHash, issued!.previous));
    await releaseRecipients(env, send.budgets, token);
    env.log.warn(
      { key: maskOtpKey(key), channels: { sms: send.useSms, email: send.useEmail } },
      'otp delivery failed on every channel',
    );
    throw deliveryFailed();
  }
  // A channel that failed charges its address no cooldown. The record still names both
  // addresses: they are one account's (targets), so the code vouches for that account either way.
  if (send.useSms && !delivered.sms) await releaseRecipients(env, [budgetOf(smsTo!)], token);
  if (send.useEmail && !delivered.email) await releaseRecipients(env, [budgetOf(emailTo!)], token);
  if (delivered.email && env.smsPolicy) {
    // The record of what was sent: losing it costs the operator's view, never the answer.
    await env.smsPolicy
      .emailSent(emailTo!)
      .catch((err: unknown) =>
        env.log.warn({ err: isApiError(err) ? err.reason : 'error' }, 'sms ledger: could not record a code mail'),
      );
    if (send.fallback) await send.fallback.done().catch(() => {});
  }
}

/** otp_generate's success data for a settled send (docs/contract.md#one-time-codes). */
export function answer(env: SendEnv, send: Send, delivered: Delivered): OtpSendResult {
  const { otp } = env;
  const { phoneChannel } = delivered;
  const previous = send.issued!.previous;
  return {
    ...(otp.debug ? { otp: send.code } : {}),
    resent: previous !== null && previous.expiresAt > send.sentAt,
    retry_after: otp.resend_cooldown_seconds,
    cooldown: otp.resend_cooldown_seconds,
    expires_in: otp.ttl_seconds,
    notified: {
      email: delivered.email,
      sms: delivered.sms,
      ...(delivered.sms && phoneChannel ? { channel: phoneChannel } : {}),
    },
    // The answer says the code also went by mail because the last SMS did not arrive,
    // or went by another channel than the phone's first (WhatsApp refused it, or its last message was not read).
    ...(send.fallback && delivered.email
      ? { fallback: 'email' as const }
      : phoneChannel && phoneChannel !== send.plan.preferred
        ? { fallback: phoneChannel }
        : {}),
  };
}
