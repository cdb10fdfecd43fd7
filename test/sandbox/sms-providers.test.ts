import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { twilioSignature } from '../../src/clients/twilio';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { onFreePort } from '../support/ports';

/*
 * Two sandbox providers (the contract's gateway, then Twilio as its backup) behind a running
 * service: whichever way the gateway fails, the code reaches the outbox exactly once, by
 * Twilio; Twilio's signed receipts come back to the service and mark the ledger delivered.
 */

const silent = pino({ level: 'silent' });

describe('sandbox SMS providers: failover and receipts', () => {
  let service: Service;
  const generate = (uid: string) =>
    fetch(`${service.url}/otp_generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uid }),
    }).then((r) => r.json() as Promise<{ success: boolean; data: Record<string, unknown> }>);
  const ledger = () =>
    fetch(`${service.url}/_sms/ledger`).then(
      (r) => r.json() as Promise<{ data: { entries: Array<Record<string, unknown>>; breakers: unknown[] } }>,
    );

  beforeAll(async () => {
    service = await onFreePort((port) =>
      startService(
        testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port }, sms: { timeout_seconds: 1 } }),
        { log: silent, otpLog: silent },
      ),
    );
  });
  afterAll(() => service.close());
  afterEach(() => {
    service.sandbox!.smsFaults.set('gateway', 'none');
    service.sandbox!.outbox.clear();
  });

  it('configures the gateway first and Twilio as its backup, with receipts to the service; WhatsApp idle', () => {
    expect(service.config.sms.providers.map((p) => [p.kind, p.weight])).toEqual([
      ['gateway', 1],
      ['twilio', 0],
      // WhatsApp's providers (test/sandbox/whatsapp.test.ts), idle: the sandbox's channels are SMS everywhere unless configured.
      ['twilio_whatsapp', 0],
      ['whatsapp_cloud', 1],
    ]);
    expect(service.config.sms.channels).toEqual({});
    expect(service.config.sms.receipts.callback_base_url).toBe(service.url);
  });

  it('sends by the gateway while it works', async () => {
    expect((await generate('+393330000101')).success).toBe(true);
    expect((await ledger()).data.entries[0]).toMatchObject({ provider: 'gateway' });
    expect(service.sandbox!.outbox.to('+393330000101')).toHaveLength(1);
  });

  it.each(['error_5xx', 'timeout', 'reset'] as const)(
    'skips the gateway when it fails (%s): one SMS, by Twilio, and its receipt marks it delivered',
    async (fault) => {
      service.sandbox!.smsFaults.set('gateway', fault);
      const phone = `+3933300002${['error_5xx', 'timeout', 'reset'].indexOf(fault)}1`;
      const answer = await generate(phone);
      expect(answer).toMatchObject({ success: true, data: { notified: { sms: true, email: false } } });
      expect(service.sandbox!.outbox.to(phone)).toHaveLength(1);
      await eventually(async () =>
        expect((await ledger()).data.entries[0]).toMatchObject({ provider: 'twilio', state: 'delivered' }),
      );
    },
  );

  it('makes the Twilio fake a new auth token at each start: a receipt signed with the old published constant is refused', async () => {
    const twilio = service.config.sms.providers.find((p) => p.kind === 'twilio');
    expect(twilio).toMatchObject({ auth_token: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const other = await startService(
      testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }),
      { log: silent, otpLog: silent },
    );
    try {
      expect(other.config.sms.providers.find((p) => p.kind === 'twilio')).not.toMatchObject({
        auth_token: (twilio as { auth_token: string }).auth_token,
      });
    } finally {
      await other.close();
    }
    const form = { MessageSid: 'SM00000000000000000000000000000001', MessageStatus: 'delivered' };
    const url = `${service.url}/_sms/receipts/twilio`;
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilioSignature('sandbox-twilio-token', url, form),
      },
      body: new URLSearchParams(form).toString(),
    });
    expect(forged.status).toBe(403);
  });

  it('answers a receipt sent as JSON with 415 naming the form encoding it expects', async () => {
    const res = await fetch(`${service.url}/_sms/receipts/twilio`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ MessageSid: 'SM1' }),
    });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { error: string; data: { reason: string } };
    expect(body.data.reason).toBe('form_expected');
    expect(body.error).toContain('application/x-www-form-urlencoded');
    expect(body.error).not.toContain('JSON');
  });
});
