import type { SandboxFake } from './fake';

const PREFIX = '/sms';
export const SANDBOX_SMS_KEY = 'sandbox-sms-key';

/** The first run of 4 to 10 digits: the code, in the OTP templates (which name it before any year). */
export const codeIn = (text: string): string | undefined => /(?<!\d)\d{4,10}(?!\d)/.exec(text)?.[0];

/**
 * The SMS gateway as the service calls it (docs/contract.md#upstream-calls): `POST /sms` with `{ receiver, body, sender }` and
 * `Authorization: Bearer sandbox-sms-key`. Accepted messages land in the outbox (channel `sms`).
 */
export function createSmsFake(): SandboxFake {
  return {
    name: 'sms',
    mount(router, { outbox, smsFaults }) {
      router.post(PREFIX, async (ctx) => {
        if (await smsFaults?.show('gateway', ctx)) return;
        if (ctx.get('authorization') !== `Bearer ${SANDBOX_SMS_KEY}`) {
          ctx.status = 401;
          ctx.body = { error: 'unauthorized' };
          return;
        }
        const { receiver, body } = (ctx.request.body ?? {}) as { receiver?: unknown; body?: unknown };
        if (typeof receiver !== 'string' || !/^\+\d{6,15}$/.test(receiver) || typeof body !== 'string' || body === '') {
          ctx.status = 400;
          ctx.body = { error: 'receiver (E.164) and body are required' };
          return;
        }
        if (smsFaults?.get('gateway') !== 'undelivered')
          outbox.add({ channel: 'sms', to: receiver, body, code: codeIn(body) });
        ctx.body = { status: 'queued', id: `sandbox-${Date.now().toString(36)}` };
      });
    },
    configure: ({ baseUrl }) => ({ sms: { api_url: `${baseUrl}${PREFIX}`, api_key: SANDBOX_SMS_KEY } }),
  };
}
