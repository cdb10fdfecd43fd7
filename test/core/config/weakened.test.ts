import { weakenedDefences, receiptsOverPlainHttp } from '../../../src/core/config/weakened';
import { testConfig } from '../../support/app';

describe('weakened defences', () => {
  it('lists none on the defaults', () => {
    expect(weakenedDefences(testConfig())).toEqual([]);
  });

  it('lists each switch that weakens a defence once, by its key, with what it exposes', () => {
    const config = testConfig({
      debug: true,
      otp: { debug: true },
      sms: { pumping: { enabled: false }, receipts: { callback_base_url: 'http://login.example.com' } },
      security: { guard_primitives: false },
      demo: { enabled: true },
      metrics: { port: 9464, host: '0.0.0.0' },
    });
    expect(weakenedDefences(config).map((w) => w.key)).toEqual([
      'debug',
      'otp.debug',
      'sms.pumping.enabled',
      'security.guard_primitives',
      'demo.enabled',
      'metrics.host',
      'sms.receipts.callback_base_url',
    ]);
    expect(weakenedDefences(config).every((w) => w.exposes.length > 10)).toBe(true);
  });

  it('names rate limits off once: the pumping defence goes with them', () => {
    const keys = weakenedDefences(
      testConfig({ rate_limits: { enabled: false }, sms: { pumping: { enabled: false } } }),
    ).map((w) => w.key);
    expect(keys).toEqual(['rate_limits.enabled']);
  });

  it('takes receipts and metrics on loopback as never crossing a network', () => {
    expect(
      receiptsOverPlainHttp(testConfig({ sms: { receipts: { callback_base_url: 'http://127.0.0.1:8080' } } })),
    ).toBe(false);
    expect(receiptsOverPlainHttp(testConfig({ sms: { receipts: { callback_base_url: 'http://[::1]:8080' } } }))).toBe(
      false,
    );
    expect(
      receiptsOverPlainHttp(testConfig({ sms: { receipts: { callback_base_url: 'https://login.example.com' } } })),
    ).toBe(false);
    expect(weakenedDefences(testConfig({ metrics: { port: 9464, host: '127.0.0.1' } }))).toEqual([]);
  });
});
