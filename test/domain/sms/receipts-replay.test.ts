import pino from 'pino';
import { twilioSignature } from '../../../src/clients/twilio';
import { metaSignature } from '../../../src/clients/whatsapp-cloud';
import { createMetrics } from '../../../src/core/metrics';
import { createSmsServices } from '../../../src/domain/sms';
import { createMemorySmsStore, createRedisSmsStore, type SmsStore } from '../../../src/domain/sms/store';
import { testConfig } from '../../support/app';
import { useRedis } from '../../support/redis-server';

/*
 * A delivery receipt already recorded changes nothing: replayed (providers retry, and whoever holds
 * a provider's signing secret can post one again), a `failed`, `delivered` or `read` receipt keeps
 * the entry's first time and error code, and is counted once. Through each provider's receipt path
 * (Twilio's signed callback, Meta's signed webhook; the contract's gateway posts none) on the
 * memory store and on Redis.
 */

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-token';
const APP_SECRET = 'meta-app-secret';
const TO = '+393331234567';
const BASE = 'https://login.example.com';

const config = testConfig({
  sms: {
    api_url: 'https://sms.example.test/send',
    api_key: 'k',
    allowed_regions: ['IT'],
    providers: [
      {
        kind: 'twilio',
        account_sid: SID,
        auth_token: TOKEN,
        from: '+15005550006',
        api_url: 'https://twilio.example.test',
      },
      {
        kind: 'whatsapp_cloud',
        name: 'meta',
        phone_number_id: '106540352242922',
        access_token: 'tok',
        template: 'otp_code',
        app_secret: APP_SECRET,
        verify_token: 'vt',
        api_url: 'https://graph.example.test',
      },
      { kind: 'gateway', name: 'gateway' },
    ],
    receipts: { callback_base_url: BASE, timeout_seconds: 60 },
  },
});

function services(store: SmsStore) {
  const clock = { now: 1_900_000_000_000 };
  const metrics = createMetrics();
  const sms = createSmsServices(config, {
    log: pino({ level: 'silent' }),
    now: () => clock.now,
    secret: 's',
    history: { has: async () => false },
    metrics,
    store,
  });
  /** An entry as the router records one a provider accepted. */
  const accepted = async (provider: string, messageId: string, channel: 'sms' | 'whatsapp' = 'sms') => {
    const id = sms.ledger.newId();
    await sms.ledger.recordSms({
      id,
      e164: TO,
      country: 'IT',
      numberType: 'MOBILE',
      range: '393331',
      provider,
      channel,
      messageId,
      receiptAsked: true,
    });
    return id;
  };
  const twilio = (id: string, sid: string, status: string, errorCode?: string) => {
    const url = `${BASE}/_sms/receipts/twilio?m=${id}`;
    const form: Record<string, string> = {
      AccountSid: SID,
      MessageSid: sid,
      SmsSid: sid,
      MessageStatus: status,
      SmsStatus: status,
      To: TO,
      ApiVersion: '2010-04-01',
      ...(errorCode ? { ErrorCode: errorCode } : {}),
    };
    const signature = twilioSignature(TOKEN, url, form);
    return sms.receipt('twilio', id, {
      url,
      form,
      header: (name) => (name.toLowerCase() === 'x-twilio-signature' ? signature : undefined),
    });
  };
  const meta = (wamid: string, status: string, code?: number) => {
    const raw = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'WABA',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: '106540352242922' },
                statuses: [
                  {
                    id: wamid,
                    status,
                    timestamp: '1',
                    recipient_id: TO.slice(1),
                    ...(code ? { errors: [{ code }] } : {}),
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    const signature = metaSignature(APP_SECRET, raw);
    return sms.receipt('meta', undefined, {
      url: `${BASE}/_sms/receipts/meta`,
      form: {},
      rawBody: raw,
      header: (name) => (name.toLowerCase() === 'x-hub-signature-256' ? signature : undefined),
    });
  };
  const receiptsCounted = async (status: string) =>
    Number(
      (await metrics.render()).match(
        new RegExp(`lfa_sms_receipts_total\\{[^}]*status="${status}"[^}]*\\} (\\d+)`),
      )?.[1] ?? 0,
    );
  return { sms, clock, metrics, accepted, twilio, meta, receiptsCounted };
}

function describeReplays(makeStore: () => SmsStore) {
  it('keeps the first failed_at and error code of a Twilio message through replays of its failed receipt, counted once', async () => {
    const { sms, clock, accepted, twilio, receiptsCounted } = services(makeStore());
    const id = await accepted('twilio', 'SM1');
    expect(await twilio(id, 'SM1', 'undelivered', '30003')).toBe('recorded');
    const first = await sms.ledger.latest(TO);
    expect(first).toMatchObject({ failed_at: clock.now, error_code: '30003' });
    for (let i = 0; i < 3; i += 1) {
      clock.now += 60_000;
      expect(await twilio(id, 'SM1', 'undelivered', '30008')).toBe('recorded');
    }
    expect(await sms.ledger.latest(TO)).toEqual(first);
    expect(await receiptsCounted('failed')).toBe(1);
  });

  it('keeps the first delivered_at of a Twilio message through replays of its delivered receipt', async () => {
    const { sms, clock, accepted, twilio, receiptsCounted } = services(makeStore());
    const id = await accepted('twilio', 'SM2');
    await twilio(id, 'SM2', 'delivered');
    const first = await sms.ledger.latest(TO);
    clock.now += 60_000;
    await twilio(id, 'SM2', 'delivered');
    expect(await sms.ledger.latest(TO)).toEqual(first);
    expect(first!.delivered_at).toBe(clock.now - 60_000);
    expect(await receiptsCounted('delivered')).toBe(1);
  });

  it('keeps the first failed_at of a WhatsApp message through replays of its failed webhook, counted once (the round-four finding)', async () => {
    const { sms, clock, accepted, meta, receiptsCounted } = services(makeStore());
    await accepted('meta', 'wamid.1', 'whatsapp');
    expect(await meta('wamid.1', 'failed', 131026)).toBe('recorded');
    const first = await sms.ledger.latest(TO);
    expect(first).toMatchObject({ channel: 'whatsapp', failed_at: clock.now });
    for (let i = 0; i < 3; i += 1) {
      clock.now += 60_000;
      await meta('wamid.1', 'failed', 131049);
    }
    expect(await sms.ledger.latest(TO)).toEqual(first);
    expect(await receiptsCounted('failed')).toBe(1);
  });

  it('records a WhatsApp read once, keeping the delivery before it, and a replayed read or delivered changes nothing', async () => {
    const { sms, clock, accepted, meta, receiptsCounted } = services(makeStore());
    await accepted('meta', 'wamid.2', 'whatsapp');
    const deliveredAt = clock.now;
    await meta('wamid.2', 'delivered');
    clock.now += 5_000;
    const readAt = clock.now;
    await meta('wamid.2', 'read');
    clock.now += 5_000;
    await meta('wamid.2', 'read');
    await meta('wamid.2', 'delivered');
    expect(await sms.ledger.latest(TO)).toMatchObject({ delivered_at: deliveredAt, read_at: readAt });
    expect([await receiptsCounted('delivered'), await receiptsCounted('read')]).toEqual([1, 1]);
  });

  it('has no receipt path for the contract gateway: a receipt posted for it records nothing', async () => {
    const { sms, accepted } = services(makeStore());
    const id = await accepted('gateway', 'g1');
    expect(
      await sms.receipt('gateway', id, {
        url: `${BASE}/_sms/receipts/gateway?m=${id}`,
        form: { status: 'failed' },
        header: () => undefined,
      }),
    ).toBe('unknown_provider');
    expect(await sms.ledger.latest(TO)).not.toHaveProperty('failed_at');
  });

  it('converts an entry once when its verification is told twice (two instances)', async () => {
    const { sms, clock, accepted, metrics } = services(makeStore());
    await accepted('twilio', 'SM3');
    const at = clock.now;
    await Promise.all([sms.ledger.verified(TO), sms.ledger.verified(TO)]);
    clock.now += 1000;
    await sms.ledger.verified(TO);
    expect((await sms.ledger.latest(TO))!.verified_at).toBe(at);
    expect(await metrics.render()).toMatch(
      /lfa_sms_verified_total\{provider="twilio",channel="sms",country="IT"\} 1\n/,
    );
  });
}

describe('replayed receipts on the memory store', () =>
  describeReplays(() => createMemorySmsStore({ maxEntries: 1000 })));

describe('replayed receipts on Redis', () => {
  const redis = useRedis();
  describeReplays(() => createRedisSmsStore(redis.redis(), `rr${Math.random().toString(36).slice(2)}:`));
});
