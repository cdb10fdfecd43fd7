import type { PhoneChannel } from '../../../core/config/schema';
import type { CallContext } from '../../../core/context';
import type { SmsSent } from '../../../clients/sms';
import { isApiError } from '../../../core/errors';
import { maskEmail, maskPhone } from '../../../core/logger';
import type { Delivered, Send, SendEnv } from './types';

/*
 * The fourth step of a send: the same code, one message, to the phone (on whichever of its
 * channels takes it first) and to the inbox, at once. A channel that fails is an answer, not an error.
 */

/** Sends the issued code on its channels; says which took it. */
export async function deliver(env: SendEnv, ctx: CallContext, send: Send): Promise<Delivered> {
  const { smsTo, emailTo, code, plan } = send;
  const text = env.message(code, ctx.locale);
  let phoneChannel: PhoneChannel | undefined;
  const sendToPhone = async () => {
    const sent = await env.sms.send(ctx, {
      to: smsTo!,
      body: text.sms,
      code,
      locale: ctx.locale ?? env.config.mail.default_locale,
      channels: plan.channels,
    });
    phoneChannel = sent.channel ?? 'sms';
    return sent;
  };
  const [sms, email] = await Promise.all([
    send.useSms ? deliverTo(env, 'sms', smsTo!, sendToPhone) : false,
    send.useEmail
      ? deliverTo(env, 'email', emailTo!, () =>
          env.mailer.send(ctx, { to: emailTo!, subject: text.subject, html: text.html, text: text.text }),
        )
      : false,
  ]);
  // A test identifier receives nothing: it reads as a send on the phone's first channel, as a real one would.
  if (sms && !phoneChannel) phoneChannel = plan.channels[0];
  return { sms, email, phoneChannel };
}

/** One channel's send, logged and counted; false when it failed. */
async function deliverTo(
  env: SendEnv,
  channel: 'sms' | 'email',
  to: string,
  send: () => Promise<unknown>,
): Promise<boolean> {
  const { otpLog, metrics } = env;
  const masked = () => (channel === 'sms' ? maskPhone(to) : maskEmail(to));
  // The phone's channel is the router's answer (sms or whatsapp); the mail's is the mail.
  const used = (sent: unknown) => (sent as Partial<SmsSent> | undefined)?.channel ?? channel;
  // A test identifier (otp.test_numbers) receives nothing; the answer still reads as a delivery, so the wire does not tell it apart.
  if (env.testIdentifiers.size > 0 && env.testIdentifiers.has(to)) {
    if (otpLog.isLevelEnabled('info'))
      otpLog.info({ event: 'send', channel, to: masked(), outcome: 'test_identifier' }, 'send');
    return true;
  }
  try {
    const sent = await send();
    if (otpLog.isLevelEnabled('info'))
      otpLog.info({ event: 'send', channel: used(sent), to: masked(), outcome: 'sent' }, 'send');
    metrics?.codeSent(used(sent), 'sent');
    return true;
  } catch (err) {
    const reason = isApiError(err) ? err.reason : 'error';
    metrics?.codeSent(channel, 'failed');
    otpLog.warn({ event: 'send', channel, to: masked(), outcome: 'failed', reason }, 'send');
    return false;
  }
}
