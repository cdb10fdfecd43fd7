import { createMemoryOtpStore, packRecord, unpackRecord } from '../../../src/domain/otp/memory-store';
import { EXPIRED_RETENTION_MS } from '../../../src/domain/otp/store';
import { contractPolicy, describeOtpStore } from './store-contract';

// The memory store reads time from the clock it is given: the contract moves it instead of sleeping.
let now = Date.now();
describeOtpStore('memory', () => createMemoryOtpStore({ maxRecords: 1000, now: () => now }), { advance: (ms) => void (now += ms) });

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

  it('packs the hex digest the service stores as 32 bytes, so a code sent to its key takes 43 characters', () => {
    const record = { hash, sentAt: 1_700_000_000_123, expiresAt: 1_700_000_300_123, attempts: 0, to: key };
    expect(packRecord(record, key)).toHaveLength(43);
    expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
  });

  it('keeps where the code went when that is not the key, and back', () => {
    const record = { hash, sentAt: 1_700_000_000_123, expiresAt: 1_700_000_300_123, attempts: 0, to: '+393339999999 anna@example.com' };
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

  it('keeps a hash that is not a hex digest as text, and back', () => {
    const record = { hash: 'not-a-digest', sentAt: 1_700_000_000_123, expiresAt: 1_700_000_300_123, attempts: 1, to: 'anna@example.com' };
    expect(unpackRecord(packRecord(record, key), key)).toEqual(record);
    expect(unpackRecord(packRecord({ ...record, to: key }, key), key)).toEqual({ ...record, to: key });
  });
});
