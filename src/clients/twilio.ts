import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Config, SmsProviderConfig } from '../core/config/schema';
import type { Logger } from '../core/logger';
import { createUpstream, type ClientOptions } from './http';
import type { ReceiptRequest, ReceiptStatus, SmsProvider, SmsReceipt } from './sms';

/*
 * Twilio Programmable Messaging, the Messages resource:
 *   POST {api_url}/2010-04-01/Accounts/{AccountSid}/Messages.json
 *   form-urlencoded To, From (or MessagingServiceSid), Body, StatusCallback;
 *   HTTP Basic auth AccountSid:AuthToken; 201 with the Message resource (`sid` "SM...", `status` "queued").
 * Status callbacks are form posts to StatusCallback, signed in `X-Twilio-Signature`:
 * base64 HMAC-SHA1, keyed with the auth token, of the full callback URL followed by every
 * POST parameter, sorted by name, as name then value with no separator.
 * The sandbox (src/sandbox/twilio.ts) and test/clients/twilio.test.ts reproduce both.
 */

/** Tolerant: a 2xx is an accepted message whatever else the resource carries; only `sid` is read. */
const messageResource = z
  .looseObject({ sid: z.string().optional(), status: z.string().optional() })
  .nullable()
  .catch(null);

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Twilio's signature of a callback: what Twilio sends and what a receipt must carry. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((text, key) => text + key + params[key], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Message statuses of the Messages resource, as a receipt reads them. */
const STATUSES: Record<string, ReceiptStatus> = {
  delivered: 'delivered',
  read: 'read',
  undelivered: 'failed',
  failed: 'failed',
  canceled: 'failed',
  queued: 'pending',
  accepted: 'pending',
  scheduled: 'pending',
  sending: 'pending',
  sent: 'pending',
};

type TwilioConfig = Extract<SmsProviderConfig, { kind: 'twilio' | 'twilio_whatsapp' }>;

/**
 * Twilio's Messages resource for both channels: SMS with a Body; WhatsApp (`twilio_whatsapp`) with
 * `whatsapp:` addresses and a Content Template (ContentSid, the code as its variable 1), as
 * WhatsApp business-initiated messages must be templates. Status callbacks are alike for both.
 */
export function createTwilioProvider(
  config: Config,
  provider: TwilioConfig,
  log: Logger,
  { upstream, observe, declare }: ClientOptions = {},
): SmsProvider {
  const name = provider.name || provider.kind;
  const timeoutSeconds = provider.timeout_seconds ?? config.sms.timeout_seconds;
  const whatsapp = provider.kind === 'twilio_whatsapp';
  const api =
    upstream ??
    createUpstream({
      name: `sms_${name}`,
      label: whatsapp ? 'WhatsApp' : 'SMS',
      timeoutMs: timeoutSeconds * 1000,
      log,
      observe,
      declare,
      endpoints: ['messages'],
    });
  const url = `${provider.api_url.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(provider.account_sid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${provider.account_sid}:${provider.auth_token}`).toString('base64')}`;
  const address = (e164: string) => (whatsapp ? `whatsapp:${e164}` : e164);
  const from = provider.from.replace(/^whatsapp:/, '');
  return {
    name,
    kind: provider.kind,
    channel: whatsapp ? 'whatsapp' : 'sms',
    countries: provider.countries,
    weight: provider.weight,
    receipts: true,
    configured: true,
    async send(ctx, { to, body, code, callbackUrl }) {
      const content =
        provider.kind === 'twilio_whatsapp'
          ? { ContentSid: provider.content_sid, ContentVariables: JSON.stringify({ 1: code ?? '' }) }
          : { Body: body };
      const response = await api.call(ctx, {
        endpoint: 'messages',
        method: 'POST',
        url,
        form: {
          To: address(to),
          ...(provider.messaging_service_sid
            ? { MessagingServiceSid: provider.messaging_service_sid }
            : { From: address(from) }),
          ...content,
          StatusCallback: callbackUrl,
        },
        headers: { Authorization: authorization },
        reply: messageResource,
      });
      const sid = response.data?.sid;
      return {
        status: response.status,
        durationMs: response.durationMs,
        provider: name,
        ...(sid ? { messageId: sid } : {}),
      };
    },
    receipt(request: ReceiptRequest): SmsReceipt | null {
      const given = request.header(TWILIO_SIGNATURE_HEADER);
      if (!given) return null;
      const expected = Buffer.from(twilioSignature(provider.auth_token, request.url, request.form));
      const actual = Buffer.from(given);
      if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
      // Signed by whoever holds this auth token, so by this account: another account's callbacks are not ours to record.
      if (request.form.AccountSid !== provider.account_sid) return null;
      const messageId = request.form.MessageSid ?? request.form.SmsSid;
      const status = request.form.MessageStatus ?? request.form.SmsStatus;
      if (!messageId || !status) return null;
      return {
        messageId,
        status: STATUSES[status] ?? 'unknown',
        ...(request.form.ErrorCode ? { errorCode: request.form.ErrorCode } : {}),
      };
    },
  };
}
