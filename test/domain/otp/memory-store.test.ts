import { createMemoryOtpStore, packRecord, unpackRecord } from '../../../src/domain/otp/memory-store';
import { EXPIRED_RETENTION_MS } from '../../../src/domain/otp/store';
import { contractPolicy, describeOtpStore } from './store-contract';

// The memory store reads time from the clock it is given: the contract moves it instead of sleeping.
let now = Date.now();
describeOtpStore('memory', () => createMemoryOtpStore({ maxRecords: 1000, now: () => now }), {
  advance: (ms) => void (now += ms),
});

describe('memory OTP store', () => {
  const policy = contractPolicy;
  const hash = 'ab'.repeat(32);

  it('forgets an expired record after the retention period, so it is then simply invalid', async () => {
    let now = 1_700_000_000_000;
    const store = createMemoryOtpStore({ maxRecords: 10, now: () => now });
    await store.issue('k', hash, now, policy);
    now += policy.ttlMs + EXPIRED_RETENTION_MS - 1;
    expect((await store.verify('k', hash, now, policy)).outcome).toBe('expired');
    now += 1000;
    expect((await store.verify('k', hash, now, policy)).outcome).toBe('invalid');
  });

  it('holds at most max_records records, dropping the least recently used', async () => {
    const store = createMemoryOtpStore({ maxRecords: 2 });
    const now = Date.now();
    for (const key of ['a', 'b', 'c']) await store.issue(key, hash, now, policy);
    expect((await store.verify('a', hash, now, policy)).outcome).toBe('invalid');
    expect((await store.verify('b', hash, now, policy)).outcome).toBe('ok');
    expect((await store.verify('c', hash, now, policy)).outcome).toBe('ok');
  });

  const key = '+393331234567';

  it('packs a record into a short string and back', () => {
    const record = { hash, sentAt: 1_700_000_000_123, expiresAt: 1_700_000_300_123, attempts: 3, to: key };
    const packed = packRecord(record, key);
    expect(packed.length).toBeLessThan(100);
    expect(unpackRecord(packed, key)).toEqual(record);
  });

  it('packs what the service stores (a hex digest, a TTL in whole seconds, sent to its key) in 40 characters, and back', () => {
    const record = { hash, sentAt: 1_700_000_000_123, expiresAt: 1_700_000_300_123, attempts: 4, to: key };
    expect(packRecord(record, key)).toHaveLength(40);
    expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
  });

  it('packs the journey a flow asked the code for in 13 characters more, in every form, and back', () => {
    const journey = 'AAECAwQFBgcICQoL';
    const compact = { hash, sentAt: 1_700_000_000_123, expiresAt: 1_700_000_300_123, attempts: 4, to: key, journey };
    expect(packRecord(compact, key)).toHaveLength(53);
    expect(unpackRecord(packRecord(compact, key), key)).toEqual(compact);
    for (const record of [
      { ...compact, to: `${key} anna@example.com` },
      { ...compact, hash: 'not-hex' },
      { ...compact, expiresAt: compact.expiresAt + 1 },
    ]) {
      expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
    }
    // A record without a journey whose binary form happened to begin with the journey's mark is kept as text.
    const marked = { ...compact, journey: undefined, hash: `60${'ab'.repeat(31)}` };
    delete marked.journey;
    expect(unpackRecord(packRecord(marked, key), key)).toEqual(marked);
  });

  it('keeps every millisecond: a life that is not whole seconds, or a time before 2020, takes the 43-character form, and back', () => {
    for (const [sentAt, expiresAt] of [
      [1_700_000_000_123, 1_700_000_300_124],
      [1_000, 301_000],
    ] as const) {
      const record = { hash, sentAt, expiresAt, attempts: 0, to: key };
      expect(packRecord(record, key)).toHaveLength(43);
      expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
    }
  });

  it('keeps where the code went when that is not the key, and back', () => {
    const record = {
      hash,
      sentAt: 1_700_000_000_123,
      expiresAt: 1_700_000_300_123,
      attempts: 0,
      to: '+393339999999 anna@example.com',
    };
    expect(packRecord(record, key)).toHaveLength(43 + record.to.length);
    expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
  });

  it('keeps a record whose life does not fit 32 bits of ms, or that expires before it was sent, as text, and back', () => {
    for (const expiresAt of [1_700_000_000_123 + 2 ** 32, 1_700_000_000_000]) {
      const record = { hash, sentAt: 1_700_000_000_123, expiresAt, attempts: 2, to: key };
      expect(packRecord(record, key).startsWith('~')).toBe(true);
      expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
    }
  });

  it('keeps the longest life and the latest time the 40-character form holds, and goes wider one step past them', () => {
    const epoch = Date.UTC(2020, 0, 1);
    const longest = {
      hash,
      sentAt: epoch + 2 ** 40 - 1,
      expiresAt: epoch + 2 ** 40 - 1 + 65_535_000,
      attempts: 255,
      to: key,
    };
    expect(packRecord(longest, key)).toHaveLength(40);
    expect(unpackRecord(packRecord(longest, key), key)).toEqual(longest);
    for (const past of [
      { ...longest, sentAt: epoch + 2 ** 40, expiresAt: epoch + 2 ** 40 + 1000 },
      { ...longest, expiresAt: longest.sentAt + 65_536_000 },
    ]) {
      expect(packRecord(past, key)).toHaveLength(43);
      expect(unpackRecord(packRecord(past, key), key)).toEqual(past);
    }
  });

  it('keeps a hash that is not a hex digest as text, and back', () => {
    const record = {
      hash: 'not-a-digest',
      sentAt: 1_700_000_000_123,
      expiresAt: 1_700_000_300_123,
      attempts: 1,
      to: 'anna@example.com',
    };
    expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
    expect(unpackRecord(packRecord({ ...record, to: key }, key), key)).toEqual({ ...record, to: key });
  });

  // Phone keys are held as numbers (memory per pending code): they must never meet another key.
  it('keeps E.164 keys apart from every other spelling of their digits', async () => {
    const issuedAt = 1_700_000_000_000;
    let now = issuedAt;
    const store = createMemoryOtpStore({ maxRecords: 100, now: () => now });
    const keys = [
      '+393331234567',
      '393331234567',
      '+0393331234567',
      ' +393331234567',
      '+39333123456789012',
      '+393331234568',
      '+123456789012345',
      '+1',
    ];
    const hashOf = (k: string) => Buffer.from(k.padEnd(32, '.')).toString('hex').slice(0, 64);
    for (const k of keys) expect((await store.issue(k, hashOf(k), now, policy)).status).toBe('issued');
    now += 1;
    for (const k of keys)
      expect(await store.verify(k, hashOf(keys.find((other) => other !== k)!), now, policy)).toEqual({
        outcome: 'invalid',
      });
    for (const k of keys)
      expect(await store.verify(k, hashOf(k), now, policy)).toEqual({ outcome: 'ok', to: k, sentAt: issuedAt });
  });

  it('steps a phone key through a whole life: cooldown, wrong guesses carried over, revert, expiry, retention', async () => {
    const firstSent = Date.UTC(2026, 5, 1);
    let now = firstSent;
    const store = createMemoryOtpStore({ maxRecords: 10, now: () => now });
    const a = 'a'.repeat(64);
    const b = 'b'.repeat(64);
    const first = await store.issue(key, a, now, policy);
    expect(first).toMatchObject({
      status: 'issued',
      record: { hash: a, sentAt: now, expiresAt: now + policy.ttlMs, attempts: 0, to: key },
      previous: null,
    });
    expect(await store.issue(key, b, now + 1_000, policy)).toEqual({
      status: 'blocked',
      retryAfterMs: policy.cooldownMs - 1_000,
    });
    expect(await store.verify(key, b, now + 2_000, policy)).toEqual({ outcome: 'invalid' });
    now += policy.cooldownMs;
    const second = await store.issue(key, b, now, policy);
    expect(second).toMatchObject({
      status: 'issued',
      record: { hash: b, attempts: 1 },
      previous: { hash: a, attempts: 1 },
    });
    expect(await store.revert(key, b, second.status === 'issued' ? second.previous : null)).toBe(true);
    // The revert brought back the first code, with the time it was sent.
    expect(await store.verify(key, a, now, policy)).toEqual({ outcome: 'ok', to: key, sentAt: firstSent });
    await store.issue(key, a, now, policy);
    expect(await store.verify(key, a, now + policy.ttlMs, policy)).toEqual({ outcome: 'expired' });
    expect(await store.verify(key, a, now + policy.ttlMs + EXPIRED_RETENTION_MS, policy)).toEqual({
      outcome: 'invalid',
    });
  });

  it('holds at most max_records phone keys too, dropping the least recently used', async () => {
    const store = createMemoryOtpStore({ maxRecords: 2 });
    const now = Date.now();
    const phones = ['+393331000001', '+393331000002', '+393331000003'];
    for (const phone of phones) await store.issue(phone, hash, now, policy);
    expect((await store.verify(phones[0]!, hash, now, policy)).outcome).toBe('invalid');
    expect((await store.verify(phones[1]!, hash, now, policy)).outcome).toBe('ok');
    expect((await store.verify(phones[2]!, hash, now, policy)).outcome).toBe('ok');
  });
});
