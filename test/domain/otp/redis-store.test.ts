import { createRedisOtpStore } from '../../../src/domain/otp/redis-store';
import { useRedisTargets } from '../../support/redis-targets';
import { contractPolicy, describeOtpStore } from './store-contract';

const targets = useRedisTargets();

describe.each(targets)('$name', (target) => {
  // The very suite the memory store passes: one behaviour, every store.
  describeOtpStore(target.name, () =>
    createRedisOtpStore(target.client(), { prefix: `t${Math.random().toString(36).slice(2)}:` }),
  );

  describe('redis OTP store', () => {
    it('namespaces keys and lets Redis expire them after the retention period', async () => {
      const store = createRedisOtpStore(target.client(), { prefix: 'ns1:' });
      await store.issue('+393331234567', 'ab'.repeat(32), Date.now(), contractPolicy);
      const ttl = await target.client().pttl('ns1:otp:+393331234567');
      expect(ttl).toBeGreaterThan(contractPolicy.ttlMs);
      expect(await target.client().get('ns1:otp:+393331234567')).toMatch(/^[a-f0-9]{64}\|\d+\|\d+\|0\|\+393331234567$/);
    });

    it('answers ping while Redis is up', async () => {
      expect(await createRedisOtpStore(target.client(), { prefix: 'p:' }).ping()).toBe(true);
    });
  });
});
