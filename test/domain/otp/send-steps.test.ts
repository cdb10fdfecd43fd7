import pino from 'pino';
import { isApiError } from '../../../src/core/errors';
import { createMemoryOtpStore } from '../../../src/domain/otp/memory-store';
import { createKeyNormaliser } from '../../../src/domain/otp/key';
import { createOtpHasher } from '../../../src/domain/otp/code';
import { targets } from '../../../src/domain/otp/send/admit';
import { claimRecipients } from '../../../src/domain/otp/send/plan';
import { answer } from '../../../src/domain/otp/send/settle';
import type { Delivered, Send, SendEnv } from '../../../src/domain/otp/send/types';
import { testConfig } from '../../support/app';

/*
 * The steps of a code's send, each alone: the service's tests (service.test.ts, the otp_generate
 * contract) cover them together.
 */

const log = pino({ level: 'silent' });
const reasonOf = (err: unknown) => (isApiError(err) ? err.reason : err);

const stores: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

function env(overrides: Partial<SendEnv> = {}): SendEnv {
  const config = testConfig({ sms: { api_url: 'https://sms.example.test/send', api_key: 'k' } });
  const store = createMemoryOtpStore({ maxRecords: 100 });
  stores.push(store);
  return {
    config,
    otp: config.otp,
    policy: {
      ttlMs: config.otp.ttl_seconds * 1000,
      cooldownMs: config.otp.resend_cooldown_seconds * 1000,
      maxAttempts: config.otp.max_attempts,
    },
    log,
    otpLog: log,
    now: () => 1_900_000_000_000,
    store,
    sms: { configured: true, send: async () => ({ status: 200, durationMs: 1 }) },
    mailer: {
      configured: true,
      send: async () => undefined,
      close: async () => undefined,
    } as unknown as SendEnv['mailer'],
    limits: {} as SendEnv['limits'],
    region: 'IT',
    allowedRegions: ['IT'],
    normaliseKey: createKeyNormaliser('IT'),
    testIdentifiers: new Map(),
    hash: createOtpHasher('s3cret'),
    message: () => ({ sms: '', subject: '', html: '', text: '' }) as unknown as ReturnType<SendEnv['message']>,
    ...overrides,
  };
}

describe('admit: the targets of a request', () => {
  it('texts a phone key and mails an email key', () => {
    const e = env();
    expect(targets(e, { key: '333 123 4567' })).toEqual({
      key: '+393331234567',
      smsTo: '+393331234567',
      emailTo: undefined,
    });
    expect(targets(e, { key: 'Ada@Example.test' })).toMatchObject({
      smsTo: undefined,
      emailTo: expect.stringMatching(/^ada@example\.test$/i),
    });
  });

  it('refuses a channel for a code that goes by mail, and a phone outside the allowed regions', () => {
    const e = env();
    expect(() => targets(e, { key: 'ada@example.test', channel: 'whatsapp' })).toThrow(
      expect.objectContaining({ reason: 'invalid_request' }),
    );
    let refusal: unknown;
    try {
      targets(e, { key: 'ada@example.test', phone: '+447911123456' });
    } catch (err) {
      refusal = reasonOf(err);
    }
    expect(refusal).toBe('region_not_allowed');
  });
});

describe('plan: the recipients’ cooldowns', () => {
  it('claims all or none: a recipient still cooling gives back the ones claimed before it', async () => {
    const e = env();
    await claimRecipients(e, ['b@example.test'], 'earlier');
    await expect(claimRecipients(e, ['a@example.test', 'b@example.test'], 'now').catch(reasonOf)).resolves.toBe(
      'already_sent',
    );
    // a@ was claimed and given back: a third send may claim it.
    await expect(claimRecipients(e, ['a@example.test'], 'later')).resolves.toBeUndefined();
  });
});

describe('settle: the answer', () => {
  const send = (over: Partial<Send>): Send => ({
    request: { key: 'k' },
    key: 'k',
    smsTo: '+393331234567',
    emailTo: undefined,
    useSms: true,
    useEmail: false,
    fallback: undefined,
    recipients: [],
    budgets: [],
    token: 't',
    sentAt: 1000,
    code: '123456',
    codeHash: 'h',
    issued: { status: 'issued', record: {} as never, previous: null },
    plan: { channels: ['whatsapp', 'sms'], preferred: 'whatsapp' },
    ...over,
  });
  const delivered = (over: Partial<Delivered>): Delivered => ({
    sms: true,
    email: false,
    phoneChannel: 'whatsapp',
    ...over,
  });

  it('names no fallback when the phone’s first channel took the code', () => {
    const result = answer(env(), send({}), delivered({}));
    expect(result.fallback).toBeUndefined();
    expect(result.notified).toEqual({ sms: true, email: false, channel: 'whatsapp' });
    expect(result.resent).toBe(false);
  });

  it('names the channel that took it instead of the preferred one, and the mail of a fallback first', () => {
    expect(answer(env(), send({}), delivered({ phoneChannel: 'sms' })).fallback).toBe('sms');
    const fallback = { email: 'a@example.test', done: async () => undefined };
    expect(
      answer(env(), send({ fallback, useEmail: true }), delivered({ email: true, phoneChannel: 'sms' })).fallback,
    ).toBe('email');
  });

  it('is a resend only while the previous code still lived', () => {
    const previous = { expiresAt: 2000 } as never;
    expect(
      answer(env(), send({ issued: { status: 'issued', record: {} as never, previous } }), delivered({})).resent,
    ).toBe(true);
    expect(
      answer(env(), send({ sentAt: 3000, issued: { status: 'issued', record: {} as never, previous } }), delivered({}))
        .resent,
    ).toBe(false);
  });
});
