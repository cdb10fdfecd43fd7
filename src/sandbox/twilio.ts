import { randomBytes } from 'node:crypto';
import { twilioSignature, TWILIO_SIGNATURE_HEADER } from '../clients/twilio';
import type { SandboxFake } from './fake';
import { codeIn } from './sms';
import { templateText } from './whatsapp';

const PREFIX = '/twilio';
const SANDBOX_TWILIO_SID = 'ACsandbox000000000000000000000000';
const SANDBOX_TWILIO_FROM = '+15005550006';
/** The Content Template of the WhatsApp code (its variable 1 is the code). */
const SANDBOX_TWILIO_CONTENT_SID = 'HXb5b62575e6e4ff6129ad7c8efe1f983e';
/** Between the reply and each status callback: a receipt comes after the acceptance, as Twilio's do. */
const CALLBACK_DELAY_MS = 50;

/** Twilio's error resource, as its API answers a refusal. */
const twilioError = (status: number, code: number, message: string) => ({
  code,
  message,
  more_info: `https://www.twilio.com/docs/errors/${code}`,
  status,
});

/**
 * Twilio's Messages resource as the service calls it (src/clients/twilio.ts):
 * POST /twilio/2010-04-01/Accounts/<sid>/Messages.json, form-urlencoded, HTTP Basic auth; 201 with
 * the Message resource. With a StatusCallback it then posts `sent` and `delivered` there, signed
 * in X-Twilio-Signature as Twilio signs them. Accepted messages land in the outbox (channel `sms`).
 */
export function createTwilioFake(): SandboxFake {
  // Per start, never a constant in the code: whoever knew it could forge receipts to any sandbox they reach.
  const authToken = randomBytes(16).toString('hex');
  return {
    name: 'twilio',
    mount(router, { outbox, log, smsFaults }) {
      const basic = `Basic ${Buffer.from(`${SANDBOX_TWILIO_SID}:${authToken}`).toString('base64')}`;
      router.post(`${PREFIX}/2010-04-01/Accounts/:sid/Messages.json`, async (ctx) => {
        // Each configured provider has its own switch: WhatsApp through Twilio can fail while its SMS works.
        const provider = String((ctx.request.body as Record<string, unknown> | undefined)?.To ?? '').startsWith(
          'whatsapp:',
        )
          ? 'twilio-whatsapp'
          : 'twilio';
        if (await smsFaults?.show(provider, ctx)) return;
        const undelivered = smsFaults?.get(provider) === 'undelivered';
        if (ctx.get('authorization') !== basic || ctx.params.sid !== SANDBOX_TWILIO_SID) {
          ctx.status = 401;
          ctx.body = twilioError(401, 20003, 'Authenticate');
          return;
        }
        const form = (ctx.request.body ?? {}) as Record<string, string | undefined>;
        // WhatsApp through Twilio: `whatsapp:` addresses, and a Content Template instead of a Body.
        const whatsapp = typeof form.To === 'string' && form.To.startsWith('whatsapp:');
        const to = whatsapp ? form.To!.slice('whatsapp:'.length) : form.To;
        if (!ctx.is('application/x-www-form-urlencoded') || typeof to !== 'string' || !/^\+\d{6,15}$/.test(to)) {
          ctx.status = 400;
          ctx.body = twilioError(400, 21211, "The 'To' number is not a valid phone number.");
          return;
        }
        if (!form.From && !form.MessagingServiceSid) {
          ctx.status = 400;
          ctx.body = twilioError(
            400,
            21603,
            "A 'From' or 'MessagingServiceSid' parameter is required to send a message.",
          );
          return;
        }
        let body = form.Body;
        let code = body ? codeIn(body) : undefined;
        if (whatsapp) {
          const variables = (() => {
            try {
              return JSON.parse(form.ContentVariables ?? '{}') as Record<string, unknown>;
            } catch {
              return {};
            }
          })();
          if (
            form.ContentSid !== SANDBOX_TWILIO_CONTENT_SID ||
            typeof variables['1'] !== 'string' ||
            (form.From !== undefined && !form.From.startsWith('whatsapp:'))
          ) {
            ctx.status = 400;
            ctx.body = twilioError(400, 63027, 'Template does not exist for a language and locale');
            return;
          }
          if (smsFaults?.whatsAppState(to) === 'absent') {
            ctx.status = 400;
            ctx.body = twilioError(400, 63003, 'Channel could not find To address');
            return;
          }
          code = variables['1'];
          body = templateText('it', code);
        }
        if (!body) {
          ctx.status = 400;
          ctx.body = twilioError(400, 21602, 'Message body is required.');
          return;
        }
        const sid = `${whatsapp ? 'MM' : 'SM'}${randomBytes(16).toString('hex')}`;
        if (!undelivered) outbox.add({ channel: whatsapp ? 'whatsapp' : 'sms', to, body, code });
        ctx.status = 201;
        ctx.body = {
          sid,
          account_sid: SANDBOX_TWILIO_SID,
          api_version: '2010-04-01',
          to: form.To,
          from: form.From ?? null,
          messaging_service_sid: form.MessagingServiceSid ?? null,
          body,
          status: form.MessagingServiceSid ? 'accepted' : 'queued',
          num_segments: '1',
          direction: 'outbound-api',
          date_created: new Date().toUTCString(),
          error_code: null,
          error_message: null,
          uri: `/2010-04-01/Accounts/${SANDBOX_TWILIO_SID}/Messages/${sid}.json`,
        };
        const callback = form.StatusCallback;
        if (callback) {
          const post = async (status: string) => {
            const params = {
              AccountSid: SANDBOX_TWILIO_SID,
              ApiVersion: '2010-04-01',
              From: form.From ?? '',
              MessageSid: sid,
              MessageStatus: status,
              SmsSid: sid,
              SmsStatus: status,
              To: form.To!,
            };
            await fetch(callback, {
              method: 'POST',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                [TWILIO_SIGNATURE_HEADER]: twilioSignature(authToken, callback, params),
              },
              body: new URLSearchParams(params).toString(),
            }).catch((err: unknown) =>
              log.warn({ err: { message: (err as Error).message } }, 'sandbox twilio: status callback failed'),
            );
          };
          const statuses = undelivered
            ? ['sent', 'failed']
            : whatsapp && smsFaults?.whatsAppState(to) !== 'unread'
              ? ['sent', 'delivered', 'read']
              : ['sent', 'delivered'];
          void statuses.reduce(
            (previous, status) =>
              previous
                .then(() => new Promise((resolve) => setTimeout(resolve, CALLBACK_DELAY_MS).unref()))
                .then(() => post(status)),
            Promise.resolve(),
          );
        }
      });
    },
    configure: ({ baseUrl }) => ({
      sms: {
        // The contract's gateway first (its url and key are the SMS fake's: sms.api_url), Twilio as its backup.
        providers: [
          { kind: 'gateway', name: 'gateway' },
          {
            kind: 'twilio',
            name: 'twilio',
            weight: 0,
            account_sid: SANDBOX_TWILIO_SID,
            auth_token: authToken,
            from: SANDBOX_TWILIO_FROM,
            api_url: `${baseUrl}${PREFIX}`,
          },
          // WhatsApp's backup, behind the Cloud API fake (src/sandbox/whatsapp.ts): used only where sms.channels names whatsapp.
          {
            kind: 'twilio_whatsapp',
            name: 'twilio-whatsapp',
            weight: 0,
            account_sid: SANDBOX_TWILIO_SID,
            auth_token: authToken,
            from: SANDBOX_TWILIO_FROM,
            content_sid: SANDBOX_TWILIO_CONTENT_SID,
            api_url: `${baseUrl}${PREFIX}`,
          },
        ],
      },
    }),
  };
}
