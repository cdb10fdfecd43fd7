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
const messageResource = z.looseObject({ sid: z.string().optional(), status: z.string().optional() }).nullable().catch(null);

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
  read: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
  canceled: 'failed',
  queued: 'pending',
  accepted: 'pending',
  scheduled: 'pending',
  sending: 'pending',
  sent: 'pending',
};

export function createTwilioProvider(config: Config, provider: Extract<SmsProviderConfig, { kind: 'twilio' }>, log: Logger, { upstream, observe }: ClientOptions = {}): SmsProvider {
  const name = provider.name || provider.kind;
  const timeoutSeconds = provider.timeout_seconds ?? config.sms.timeout_seconds;
  const api = upstream ?? createUpstream({ name: `sms_${name}`, label: 'SMS', timeoutMs: timeoutSeconds * 1000, log, observe });
  const url = `${provider.api_url.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(provider.account_sid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${provider.account_sid}:${provider.auth_token}`).toString('base64')}`;
  return {
    name,
    kind: 'twilio',
    countries: provider.countries,
    weight: provider.weight,
    receipts: true,
    configured: true,
    async send(ctx, { to, body, callbackUrl }) {
      const response = await api.call(ctx, {
        endpoint: 'messages',
        method: 'POST',
        url,
        form: {
          To: to,
          ...(provider.messaging_service_sid ? { MessagingServiceSid: provider.messaging_service_sid } : { From: provider.from }),
          Body: body,
          StatusCallback: callbackUrl,
        },
        headers: { Authorization: authorization },
        reply: messageResource,
      });
      const sid = response.data?.sid;
      return { status: response.status, durationMs: response.durationMs, provider: name, ...(sid ? { messageId: sid } : {}) };
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
      return { messageId, status: STATUSES[status] ?? 'unknown', ...(request.form.ErrorCode ? { errorCode: request.form.ErrorCode } : {}) };
    },
  };
}
