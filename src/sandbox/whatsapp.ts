import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { metaSignature, META_SIGNATURE_HEADER } from '../clients/whatsapp-cloud';
import { projectPath } from '../core/paths';
import type { SandboxFake } from './fake';

const PREFIX = '/graph';
const VERSION = 'v21.0';
const SANDBOX_WHATSAPP_PHONE_NUMBER_ID = '100000000000001';
const SANDBOX_WHATSAPP_TEMPLATE = 'otp_code';
/** The name the service knows this provider by: its webhook is /_sms/receipts/whatsapp. */
const SANDBOX_WHATSAPP_PROVIDER = 'whatsapp';
/** Between the reply and each status: receipts come after the acceptance, as Meta's do. */
const STATUS_DELAY_MS = 50;

/** Meta's error object, as the Graph API answers a refusal. */
const graphError = (code: number, message: string) => ({
  error: { message, type: 'OAuthException', code, fbtrace_id: randomBytes(8).toString('hex') },
});

/** What the person sees: the authentication template's text in its language (templates/<locale>/otp_whatsapp.txt). */
export function templateText(language: string, code: string): string {
  const locale = language.toLowerCase().split(/[-_]/)[0] ?? 'it';
  const file = projectPath(
    'templates',
    existsSync(projectPath('templates', locale, 'otp_whatsapp.txt')) ? locale : 'it',
    'otp_whatsapp.txt',
  );
  return readFileSync(file, 'utf8')
    .trim()
    .replace(/\{\{\s*OTP_CODE\s*\}\}/g, code);
}

interface TemplateMessage {
  messaging_product?: unknown;
  to?: unknown;
  type?: unknown;
  template?: {
    name?: unknown;
    language?: { code?: unknown };
    components?: Array<{ type?: unknown; sub_type?: unknown; parameters?: Array<{ text?: unknown }> }>;
  };
}

/**
 * Meta's WhatsApp Cloud API as the service calls it (src/clients/whatsapp-cloud.ts):
 * POST /graph/v21.0/<phone-number id>/messages, JSON, Bearer token; the authentication template
 * with the code as its body parameter and in its copy-code button. Accepted messages land in the
 * outbox (channel `whatsapp`); then the app's webhook gets `sent`, `delivered` and `read`, signed
 * in X-Hub-Signature-256 with an app secret made at each start. A phone marked `absent`
 * (POST /faults/whatsapp/<digits>/absent) is refused as Meta refuses a number not on WhatsApp
 * (131026; Meta may also say so later, by a `failed` status); one marked `unread` never reads.
 */
export function createWhatsAppFake(): SandboxFake {
  // Per start, never constants in the code: whoever knew them could forge receipts to any sandbox they reach.
  const accessToken = randomBytes(16).toString('hex');
  const appSecret = randomBytes(16).toString('hex');
  const verifyToken = randomBytes(8).toString('hex');
  return {
    name: 'whatsapp',
    mount(router, { outbox, log, smsFaults, receiptsBase }) {
      router.post(`${PREFIX}/:version/:phoneNumberId/messages`, async (ctx) => {
        if (await smsFaults?.show(SANDBOX_WHATSAPP_PROVIDER, ctx)) return;
        if (ctx.get('authorization') !== `Bearer ${accessToken}`) {
          ctx.status = 401;
          ctx.body = graphError(190, 'Invalid OAuth access token.');
          return;
        }
        const message = (ctx.request.body ?? {}) as TemplateMessage;
        const template = message.template;
        const code = template?.components?.find((c) => c.type === 'body')?.parameters?.[0]?.text;
        const button = template?.components?.find((c) => c.type === 'button' && c.sub_type === 'url')?.parameters?.[0]
          ?.text;
        if (
          ctx.params.version !== VERSION ||
          ctx.params.phoneNumberId !== SANDBOX_WHATSAPP_PHONE_NUMBER_ID ||
          message.messaging_product !== 'whatsapp' ||
          typeof message.to !== 'string' ||
          !/^\d{6,15}$/.test(message.to)
        ) {
          ctx.status = 400;
          ctx.body = graphError(100, 'Invalid parameter');
          return;
        }
        if (
          message.type !== 'template' ||
          template?.name !== SANDBOX_WHATSAPP_TEMPLATE ||
          typeof template.language?.code !== 'string'
        ) {
          ctx.status = 404;
          ctx.body = graphError(132001, 'Template name does not exist in the translation');
          return;
        }
        if (typeof code !== 'string' || code === '' || button !== code) {
          ctx.status = 400;
          ctx.body = graphError(132000, 'Number of parameters does not match the expected number of params');
          return;
        }
        const to = `+${message.to}`;
        const state = smsFaults?.whatsAppState(to) ?? 'reads';
        if (state === 'absent') {
          ctx.status = 400;
          ctx.body = graphError(131026, 'Message undeliverable');
          return;
        }
        const id = `wamid.${randomBytes(18).toString('base64url')}`;
        if (smsFaults?.get(SANDBOX_WHATSAPP_PROVIDER) !== 'undelivered')
          outbox.add({ channel: 'whatsapp', to, body: templateText(template.language.code, code), code });
        ctx.body = {
          messaging_product: 'whatsapp',
          contacts: [{ input: message.to, wa_id: message.to }],
          messages: [{ id }],
        };
        const base = receiptsBase?.() ?? '';
        if (!base) return;
        const post = async (status: string) => {
          const raw = JSON.stringify({
            object: 'whatsapp_business_account',
            entry: [
              {
                id: 'sandbox-waba',
                changes: [
                  {
                    field: 'messages',
                    value: {
                      messaging_product: 'whatsapp',
                      metadata: {
                        display_phone_number: '15550000000',
                        phone_number_id: SANDBOX_WHATSAPP_PHONE_NUMBER_ID,
                      },
                      statuses: [
                        { id, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: message.to },
                      ],
                    },
                  },
                ],
              },
            ],
          });
          await fetch(`${base}/_sms/receipts/${SANDBOX_WHATSAPP_PROVIDER}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', [META_SIGNATURE_HEADER]: metaSignature(appSecret, raw) },
            body: raw,
          }).catch((err: unknown) =>
            log.warn({ err: { message: (err as Error).message } }, 'sandbox whatsapp: webhook failed'),
          );
        };
        const statuses = state === 'unread' ? ['sent', 'delivered'] : ['sent', 'delivered', 'read'];
        void statuses.reduce(
          (previous, status) =>
            previous
              .then(() => new Promise((resolve) => setTimeout(resolve, STATUS_DELAY_MS).unref()))
              .then(() => post(status)),
          Promise.resolve(),
        );
      });
    },
    configure: ({ baseUrl }) => ({
      sms: {
        providers: [
          {
            kind: 'whatsapp_cloud',
            name: SANDBOX_WHATSAPP_PROVIDER,
            phone_number_id: SANDBOX_WHATSAPP_PHONE_NUMBER_ID,
            access_token: accessToken,
            template: SANDBOX_WHATSAPP_TEMPLATE,
            app_secret: appSecret,
            verify_token: verifyToken,
            api_url: `${baseUrl}${PREFIX}`,
            api_version: VERSION,
          },
        ],
      },
    }),
  };
}
