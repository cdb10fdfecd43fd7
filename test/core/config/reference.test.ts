import { configKeys, renderConfigReference } from '../../../src/core/config/reference';
import { configSchema } from '../../../src/core/config/schema';

describe('configuration reference', () => {
  it('gives every leaf key of the schema a meaning, described on its field', () => {
    expect(
      configKeys()
        .filter((k) => !k.meaning?.trim())
        .map((k) => k.key),
    ).toEqual([]);
  });

  it('takes each meaning from the field it describes', () => {
    expect(configKeys().find((k) => k.key === 'otp.ttl_seconds')?.meaning).toBe(
      configSchema.shape.otp.unwrap().shape.ttl_seconds.description,
    );
    // Each wider network's budget is one shape, described in its own network's words.
    const sends = (bits: string) => configKeys().find((k) => k.key === `challenge.network_${bits}.sends`)?.meaning;
    expect(sends('56')).toMatch(/^Adaptive signal on a \/56 /);
    expect(sends('24')).toMatch(/^Adaptive signal on an IPv4 \/24 /);
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
    const secret = configKeys()
      .filter((k) => k.secret)
      .map((k) => k.key);
    expect(secret).toEqual(expect.arrayContaining(['security.secret', 'sms.api_key', 'newsletter.api_keys.head_a']));
    expect(secret).not.toContain('sms.api_url');
  });
});
