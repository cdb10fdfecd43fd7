import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Config, SmsProviderConfig } from '../core/config/schema';
import type { Logger } from '../core/logger';
import { createUpstream, type ClientOptions } from './http';
import type { ReceiptRequest, ReceiptStatus, SmsProvider, SmsReceipt } from './sms';

/*
 * WhatsApp through Meta's Cloud API (kind `whatsapp_cloud`):
 *   POST {api_url}/{api_version}/{phone_number_id}/messages, JSON, `Authorization: Bearer <access_token>`,
 *   a template message: the approved authentication template by name and language, its body
 *   parameter the code and its copy-code button (a `url` button at index 0) the code again;
 *   200 with `messages[0].id` ("wamid...").
 * Delivery comes by the app's one webhook, not per message: a GET handshake (`hub.mode=subscribe`,
 * `hub.verify_token`, `hub.challenge` echoed back) and POSTs of `statuses` (sent, delivered, read,
 * failed), each signed in `X-Hub-Signature-256`: `sha256=` and the hex HMAC-SHA256 of the raw body,
 * keyed with the app secret. The sandbox (src/sandbox/whatsapp.ts) and test/clients/whatsapp.test.ts reproduce both.
 */

export const META_SIGNATURE_HEADER = 'x-hub-signature-256';

/** Meta's signature of a webhook body: what Meta sends and what a receipt must carry. */
export function metaSignature(appSecret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody, 'utf8').digest('hex')}`;
}

/** Tolerant: a 2xx is an accepted message; only the message id is read. */
const sendReply = z
  .looseObject({ messages: z.array(z.looseObject({ id: z.string() })).optional() })
  .nullable()
  .catch(null);

const STATUSES: Record<string, ReceiptStatus> = {
  sent: 'pending',
  delivered: 'delivered',
  read: 'read',
  failed: 'failed',
};

/** The parts of a webhook post that are read: the statuses of this phone-number id's messages. */
const webhookBody = z.object({
  entry: z.array(
    z.object({
      changes: z.array(
        z.object({
          value: z.looseObject({
            metadata: z.looseObject({ phone_number_id: z.string() }).optional(),
            statuses: z
              .array(
                z.looseObject({
                  id: z.string(),
                  status: z.string(),
                  errors: z.array(z.looseObject({ code: z.number().optional() })).optional(),
                }),
              )
              .optional(),
          }),
        }),
      ),
    }),
  ),
});

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

export function createWhatsAppCloudProvider(
  config: Config,
  provider: Extract<SmsProviderConfig, { kind: 'whatsapp_cloud' }>,
  log: Logger,
  { upstream, observe, declare }: ClientOptions = {},
): SmsProvider {
  const name = provider.name || provider.kind;
  const timeoutSeconds = provider.timeout_seconds ?? config.sms.timeout_seconds;
  const api =
    upstream ??
    createUpstream({
      name: `sms_${name}`,
      label: 'WhatsApp',
      timeoutMs: timeoutSeconds * 1000,
      log,
      observe,
      declare,
      endpoints: ['messages'],
    });
  const url = `${provider.api_url.replace(/\/+$/, '')}/${provider.api_version}/${provider.phone_number_id}/messages`;
  return {
    name,
    kind: 'whatsapp_cloud',
    channel: 'whatsapp',
    countries: provider.countries,
    weight: provider.weight,
    // Receipts come by the app's webhook, which the app secret authenticates.
    receipts: provider.app_secret !== '',
    configured: true,
    async send(ctx, { to, code, locale }) {
      const parameter = [{ type: 'text', text: code ?? '' }];
      const response = await api.call(ctx, {
        endpoint: 'messages',
        method: 'POST',
        url,
        json: {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          to: to.replace(/^\+/, ''),
          type: 'template',
          template: {
            name: provider.template,
            language: { code: provider.language || locale || config.mail.default_locale },
            components: [
              { type: 'body', parameters: parameter },
              { type: 'button', sub_type: 'url', index: '0', parameters: parameter },
            ],
          },
        },
        headers: { Authorization: `Bearer ${provider.access_token}` },
        reply: sendReply,
      });
      const id = response.data?.messages?.[0]?.id;
      return {
        status: response.status,
        durationMs: response.durationMs,
        provider: name,
        ...(id ? { messageId: id } : {}),
      };
    },
    handshake(query) {
      const token = query.get('hub.verify_token');
      const challenge = query.get('hub.challenge');
      if (query.get('hub.mode') !== 'subscribe' || !provider.verify_token || token === null || challenge === null)
        return null;
      return sameText(token, provider.verify_token) ? challenge : null;
    },
    webhook(request: ReceiptRequest): SmsReceipt[] | null {
      if (!provider.app_secret) return null;
      const given = request.header(META_SIGNATURE_HEADER);
      if (!given || !sameText(given, metaSignature(provider.app_secret, request.rawBody ?? ''))) return null;
      let parsed: z.infer<typeof webhookBody>;
      try {
        const body = webhookBody.safeParse(JSON.parse(request.rawBody ?? ''));
        if (!body.success) return [];
        parsed = body.data;
      } catch {
        return [];
      }
      // One app may serve several numbers: only this one's messages are ours.
      return parsed.entry
        .flatMap((entry) => entry.changes)
        .filter((change) => change.value.metadata?.phone_number_id === provider.phone_number_id)
        .flatMap((change) => change.value.statuses ?? [])
        .map((status) => {
          const errorCode = status.errors?.[0]?.code;
          return {
            messageId: status.id,
            status: STATUSES[status.status] ?? 'unknown',
            ...(errorCode !== undefined ? { errorCode: String(errorCode) } : {}),
          };
        });
    },
  };
}
