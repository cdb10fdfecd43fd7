import { createRedisOtpStore } from '../../../src/domain/otp/redis-store';
import { useRedis } from '../../support/redis-server';
import { contractPolicy, describeOtpStore } from './store-contract';

const { redis } = useRedis();

// The very suite the memory store passes: one behaviour, two stores.
describeOtpStore('redis', () => createRedisOtpStore(redis(), { prefix: `t${Math.random().toString(36).slice(2)}:` }));

describe('redis OTP store', () => {
  it('namespaces keys and lets Redis expire them after the retention period', async () => {
    const store = createRedisOtpStore(redis(), { prefix: 'ns1:' });
    await store.issue('+393331234567', 'ab'.repeat(32), Date.now(), contractPolicy);
    const ttl = await redis().pttl('ns1:otp:+393331234567');
    expect(ttl).toBeGreaterThan(contractPolicy.ttlMs);
    expect(await redis().get('ns1:otp:+393331234567')).toMatch(/^[a-f0-9]{64}\|\d+\|\d+\|0\|\+393331234567$/);
  });

  it('answers ping while Redis is up', async () => {
    expect(await createRedisOtpStore(redis(), { prefix: 'p:' }).ping()).toBe(true);
  });
});
