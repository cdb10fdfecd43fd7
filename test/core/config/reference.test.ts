import { configKeyMeanings, configKeys, renderConfigReference } from '../../../src/core/config/reference';
import { configSchema } from '../../../src/core/config/schema';

describe('configuration reference', () => {
  it('gives every key of the schema a meaning', () => {
    expect(configKeys().filter((k) => !k.meaning).map((k) => k.key)).toEqual([]);
  });

  it('has no meaning for a key the schema does not have', () => {
    const keys = new Set(configKeys().map((k) => k.key));
    expect(Object.keys(configKeyMeanings).filter((k) => !keys.has(k))).toEqual([]);
  });

  it('takes each default from the schema', () => {
    const defaults = configSchema.parse({});
    const ttl = configKeys().find((k) => k.key === 'otp.ttl_seconds');
    expect(ttl).toMatchObject({ env: 'OTP__TTL_SECONDS', type: 'integer >= 1', default: defaults.otp.ttl_seconds });
  });

  it('renders one row per key with type, default and environment variable', () => {
    expect(renderConfigReference()).toContain('| `otp.store` | one of `memory`, `redis` | `"memory"` | `OTP__STORE` |');
  });

  it('marks secrets, nested keys included', () => {
    const secret = configKeys().filter((k) => k.secret).map((k) => k.key);
    expect(secret).toEqual(expect.arrayContaining(['security.secret', 'sms.api_key', 'newsletter.api_keys.head_a']));
    expect(secret).not.toContain('sms.api_url');
  });
});
