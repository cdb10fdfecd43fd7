import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { metaSignature } from '../../src/clients/whatsapp-cloud';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { onFreePort } from '../support/ports';

/*
 * WhatsApp on the sandbox, with Italy configured [whatsapp, sms] (docs/sms.md shows this
 * configuration): a phone login gets its code on WhatsApp (the Cloud API fake) and reaches 90;
 * a number the fake marks as not on WhatsApp gets it by SMS in the same request; an unread
 * WhatsApp message sends the next code by SMS; a forged webhook changes nothing. The sandbox's
 * default stays SMS (test/sandbox/sms-providers.test.ts).
 */

const silent = pino({ level: 'silent' });
const mario = sandboxSeedUsers[0]!;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers read field by field, as a frontend reads them
type Answer = { success: boolean; data: Record<string, any> };

describe('sandbox WhatsApp: Italy [whatsapp, sms]', () => {
  let service: Service;
  const call = (action: string, body: Record<string, unknown>) =>
    fetch(`${service.url}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<Answer>);
  const ledger = () =>
    fetch(`${service.url}/_sms/ledger`).then(
      (r) =>
        r.json() as Promise<{
          data: { entries: Array<Record<string, unknown>>; by_channel: Array<Record<string, unknown>> };
        }>,
    );
  const outbox = (phone: string) => service.sandbox!.outbox.to(phone);
  const upstreams = () => service.sandbox!.baseUrl;

  beforeAll(async () => {
    service = await onFreePort((port) =>
      startService(
        testConfig({
          sandbox: { enabled: true },
          server: { host: '127.0.0.1', port },
          otp: { resend_cooldown_seconds: 1 },
          sms: { timeout_seconds: 1, channels: { IT: ['whatsapp', 'sms'] }, receipts: { timeout_seconds: 1 } },
        }),
        { log: silent, otpLog: silent },
      ),
    );
  });
  afterAll(() => service.close());
  afterEach(() => {
    service.sandbox!.reset();
  });

  it('logs the seeded user in by phone with a code that arrived on WhatsApp: 14, then 90; its read receipt comes back', async () => {
    const started = await call('FeLogin', { identifier: '+39 333 123 4567' });
    expect(started.data).toMatchObject({ next_step: 14, otp: { notified: { sms: true, channel: 'whatsapp' } } });
    const [message] = outbox('+393331234567');
    expect(message).toMatchObject({
      channel: 'whatsapp',
      body: expect.stringContaining('è il tuo codice di verifica'),
    });
    const done = await call('FeVerifyOtp', { flow: 'phone', phone: '+393331234567', otp_code: message!.code });
    expect(done.data).toMatchObject({ next_step: 90, uid: mario.uid, access_token: expect.any(String) });
    await eventually(async () =>
      expect((await ledger()).data.entries[0]).toMatchObject({
        channel: 'whatsapp',
        provider: 'whatsapp',
        state: 'delivered',
        read_at: expect.any(String),
      }),
    );
  });

  it('sends a number marked not on WhatsApp its code by SMS in the same request, and says so', async () => {
    const marked = await fetch(`${upstreams()}/faults/whatsapp/393330000301/absent`, { method: 'POST' });
    expect(marked.status).toBe(200);
    const answer = await call('otp_generate', { uid: '+393330000301' });
    expect(answer.data).toMatchObject({ notified: { sms: true, channel: 'sms' }, fallback: 'sms' });
    expect(outbox('+393330000301').map((m) => m.channel)).toEqual(['sms']);
  });

  it('sends the next code by SMS when the WhatsApp message was delivered but not read in time', async () => {
    service.sandbox!.smsFaults.setWhatsApp('+393330000302', 'unread');
    expect((await call('otp_generate', { uid: '+393330000302' })).data.notified.channel).toBe('whatsapp');
    await eventually(async () =>
      expect((await ledger()).data.entries[0]).toMatchObject({ channel: 'whatsapp', state: 'delivered' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const next = await call('otp_generate', { uid: '+393330000302' });
    expect(next.data).toMatchObject({ notified: { channel: 'sms' }, fallback: 'sms' });
    expect(outbox('+393330000302').map((m) => m.channel)).toEqual(['sms', 'whatsapp']);
  });

  it('refuses a forged webhook with 403, and it changes nothing', async () => {
    expect((await call('otp_generate', { uid: '+393330000303' })).data.notified.channel).toBe('whatsapp');
    const raw = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'x',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '100000000000001' },
                statuses: [{ id: 'wamid.forged', status: 'failed' }],
              },
            },
          ],
        },
      ],
    });
    const forged = await fetch(`${service.url}/_sms/receipts/whatsapp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature('a-guessed-secret', raw) },
      body: raw,
    });
    expect(forged.status).toBe(403);
    await eventually(async () => expect((await ledger()).data.entries[0]).toMatchObject({ state: 'delivered' }));
    expect((await ledger()).data.entries.every((e) => e.failed_at === undefined)).toBe(true);
  });

  it('passes WhatsApp to Twilio when the Cloud API is down: still one WhatsApp message, read receipt signed as Twilio signs', async () => {
    service.sandbox!.smsFaults.set('whatsapp', 'error_5xx');
    const answer = await call('otp_generate', { uid: '+393330000304' });
    expect(answer.data).toMatchObject({ notified: { channel: 'whatsapp' } });
    expect(answer.data.fallback).toBeUndefined();
    expect(outbox('+393330000304').map((m) => m.channel)).toEqual(['whatsapp']);
    await eventually(async () =>
      expect((await ledger()).data.entries[0]).toMatchObject({
        provider: 'twilio-whatsapp',
        channel: 'whatsapp',
        state: 'delivered',
        read_at: expect.any(String),
      }),
    );
  });

  it('shows both channels in the ledger with their conversion', async () => {
    await fetch(`${upstreams()}/faults/whatsapp/393330000305/absent`, { method: 'POST' });
    await call('otp_generate', { uid: '+393330000305' });
    await call('otp_generate', { uid: '+393330000306' });
    const channels = (await ledger()).data.by_channel.map((g) => g.channel);
    expect(channels).toEqual(expect.arrayContaining(['sms', 'whatsapp']));
  });
});
