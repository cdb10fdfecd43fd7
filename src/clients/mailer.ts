import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../core/config/schema';
import { apiError } from '../core/errors';
import type { CallContext } from '../core/context';
import { maskEmail, type Logger } from '../core/logger';

/*
 * Mail through SMTP (nodemailer), one pooled transport per process. The contract: the channel is
 * skipped when `mail.from_address` is empty. Every failure becomes ApiError `upstream_error`,
 * never a crash; the SMTP error text is logged, not returned.
 */

interface MailMessage {
  to: string;
  subject: string;
  html: string;
  text: string;
}

interface MailReceipt {
  messageId: string;
  durationMs: number;
}

export interface Mailer {
  readonly configured: boolean;
  send(ctx: CallContext, message: MailMessage): Promise<MailReceipt>;
  close(): Promise<void>;
}

export function createMailer(config: Config, log: Logger): Mailer {
  const mail = config.mail;
  const timeoutMs = mail.timeout_seconds * 1000;
  // Built on first use: a process that never mails opens no pool.
  let transport: Transporter | undefined;
  const getTransport = () =>
    (transport ??= nodemailer.createTransport({
      pool: true,
      host: mail.host || 'localhost',
      port: mail.port,
      secure: mail.secure,
      auth: mail.user ? { user: mail.user, pass: mail.pass } : undefined,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    }));
  const from = mail.from_name ? { name: mail.from_name, address: mail.from_address } : mail.from_address;

  return {
    configured: mail.from_address !== '',
    async send(ctx, message) {
      const started = performance.now();
      try {
        // The recipient as an address object and the SMTP envelope written out: nodemailer parses
        // neither, so the one mailbox the service recorded is the one RCPT TO names, whatever it holds.
        const info = await getTransport().sendMail({
          from,
          to: { name: '', address: message.to },
          envelope: { from: mail.from_address, to: [message.to] },
          subject: message.subject,
          html: message.html,
          text: message.text,
        });
        const durationMs = Math.round(performance.now() - started);
        ctx.trace?.push({ step: 'mail.send', outcome: 'ok', duration_ms: durationMs });
        log.debug({ client: 'mail', outcome: 'ok', duration_ms: durationMs, request_id: ctx.requestId }, 'mail sent');
        return { messageId: String(info.messageId ?? ''), durationMs };
      } catch (err) {
        const durationMs = Math.round(performance.now() - started);
        const code = (err as { code?: string; responseCode?: number }).code ?? 'error';
        ctx.trace?.push({ step: 'mail.send', outcome: 'failed', code, duration_ms: durationMs });
        // SMTP replies often quote the recipient: mask addresses before logging.
        const detail = String((err as Error).message).replace(/[^\s<>"']+@[^\s<>"']+/g, (address) =>
          maskEmail(address),
        );
        log.warn(
          { client: 'mail', outcome: 'failed', code, detail, duration_ms: durationMs, request_id: ctx.requestId },
          'mail failed',
        );
        throw apiError('upstream_error', {
          params: { service: 'di posta' },
          data: { upstream: 'mail', code },
          cause: err,
        });
      }
    },
    async close() {
      transport?.close();
      transport = undefined;
    },
  };
}
