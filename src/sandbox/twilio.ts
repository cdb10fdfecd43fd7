import { randomBytes } from 'node:crypto';
import { twilioSignature, TWILIO_SIGNATURE_HEADER } from '../clients/twilio';
import type { SandboxFake } from './fake';
import { codeIn } from './sms';

const PREFIX = '/twilio';
export const SANDBOX_TWILIO_SID = 'ACsandbox000000000000000000000000';
export const SANDBOX_TWILIO_FROM = '+15005550006';
/** Between the reply and each status callback: a receipt comes after the acceptance, as Twilio's do. */
const CALLBACK_DELAY_MS = 50;

/** Twilio's error resource, as its API answers a refusal. */
const twilioError = (status: number, code: number, message: string) => ({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

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
        if (await smsFaults?.show('twilio', ctx)) return;
        if (ctx.get('authorization') !== basic || ctx.params.sid !== SANDBOX_TWILIO_SID) {
          ctx.status = 401;
          ctx.body = twilioError(401, 20003, 'Authenticate');
          return;
        }
        const form = (ctx.request.body ?? {}) as Record<string, string | undefined>;
        if (!ctx.is('application/x-www-form-urlencoded') || typeof form.To !== 'string' || !/^\+\d{6,15}$/.test(form.To)) {
          ctx.status = 400;
          ctx.body = twilioError(400, 21211, "The 'To' number is not a valid phone number.");
          return;
        }
        if (!form.From && !form.MessagingServiceSid) {
          ctx.status = 400;
          ctx.body = twilioError(400, 21603, "A 'From' or 'MessagingServiceSid' parameter is required to send a message.");
          return;
        }
        if (!form.Body) {
          ctx.status = 400;
          ctx.body = twilioError(400, 21602, 'Message body is required.');
          return;
        }
        const sid = `SM${randomBytes(16).toString('hex')}`;
        outbox.add({ channel: 'sms', to: form.To, body: form.Body, code: codeIn(form.Body) });
        ctx.status = 201;
        ctx.body = {
          sid,
          account_sid: SANDBOX_TWILIO_SID,
          api_version: '2010-04-01',
          to: form.To,
          from: form.From ?? null,
          messaging_service_sid: form.MessagingServiceSid ?? null,
          body: form.Body,
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
            const params = { AccountSid: SANDBOX_TWILIO_SID, ApiVersion: '2010-04-01', From: form.From ?? '', MessageSid: sid, MessageStatus: status, SmsSid: sid, SmsStatus: status, To: form.To! };
            await fetch(callback, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded', [TWILIO_SIGNATURE_HEADER]: twilioSignature(authToken, callback, params) },
              body: new URLSearchParams(params).toString(),
            }).catch((err: unknown) => log.warn({ err: { message: (err as Error).message } }, 'sandbox twilio: status callback failed'));
          };
          setTimeout(() => void post('sent').then(() => new Promise((resolve) => setTimeout(resolve, CALLBACK_DELAY_MS))).then(() => post('delivered')), CALLBACK_DELAY_MS).unref();
        }
      });
    },
    configure: ({ baseUrl }) => ({
      sms: {
        // The contract's gateway first (its url and key are the SMS fake's: sms.api_url), Twilio as its backup.
        providers: [
          { kind: 'gateway', name: 'gateway' },
          { kind: 'twilio', name: 'twilio', weight: 0, account_sid: SANDBOX_TWILIO_SID, auth_token: authToken, from: SANDBOX_TWILIO_FROM, api_url: `${baseUrl}${PREFIX}` },
        ],
      },
    }),
  };
}
