import { configWarnings } from '../../../src/core/config/warnings';
import { testConfig } from '../../support/app';

describe('configuration warnings', () => {
  const upstreams = {
    identity: { base_url: 'https://idp.example' },
    mail: { host: 'smtp.example' },
    sms: { api_url: 'https://sms.example' },
    user_collector: { base_url: 'https://collector.example' },
  };

  it('says nothing of a complete configuration', () => {
    expect(configWarnings(testConfig(upstreams), 'test')).toEqual([]);
  });

  it('names each missing upstream once, and that a configuration turned the sandbox off', () => {
    const warnings = configWarnings(testConfig({ identity: upstreams.identity }), 'development');
    expect(warnings.map((w) => w.key)).toEqual(['mail.host', 'sms.providers', 'user_collector.base_url']);
    expect(warnings[0]!.says).toBe(
      'no mail transport: a code to an email address is refused (channel_not_configured) (anything configured turns the default sandbox off; sandbox.enabled: true runs against its fakes)',
    );
  });

  it('speaks of production in production: no word of the sandbox it refuses', () => {
    const warnings = configWarnings(
      testConfig({ identity: upstreams.identity, metrics: { port: 9464 } }),
      'production',
    );
    expect(warnings.map((w) => w.key)).toEqual(['mail.host', 'sms.providers', 'user_collector.base_url']);
    expect(warnings[0]!.says).toBe('no mail transport: a code to an email address is refused (channel_not_configured)');
    for (const { says } of warnings) expect(says).not.toMatch(/sandbox/);
  });

  it('warns in production when nothing can scrape the metrics: no metrics.token and no metrics.port', () => {
    const unscraped = {
      key: 'metrics.port',
      says: expect.stringMatching(
        /^the metrics cannot be scraped: .*metrics\.token.*metrics\.port.*no alert can fire$/,
      ),
    };
    expect(configWarnings(testConfig(upstreams), 'production')).toEqual([unscraped]);
    expect(configWarnings(testConfig({ ...upstreams, metrics: { port: 9464 } }), 'production')).toEqual([]);
    expect(configWarnings(testConfig({ ...upstreams, metrics: { token: 'm'.repeat(32) } }), 'production')).toEqual([]);
    // Elsewhere nobody is paged: no warning.
    expect(configWarnings(testConfig(upstreams), 'development')).toEqual([]);
  });

  it('takes an SMS provider list or one identity URL override as configured', () => {
    const providers = [{ kind: 'twilio', account_sid: 'AC1', auth_token: 't', from: '+15005550006' }];
    const keys = configWarnings(
      testConfig({
        ...upstreams,
        sms: { api_url: '', providers },
        identity: { base_url: '', token_url: 'https://idp.example/token' },
      }),
      'test',
    ).map((w) => w.key);
    expect(keys).toEqual([]);
  });

  it('warns of a code that expires before the next may be asked', () => {
    const [warning] = configWarnings(
      testConfig({ ...upstreams, otp: { ttl_seconds: 2, resend_cooldown_seconds: 60 } }),
      'test',
    );
    expect(warning).toEqual({
      key: 'otp.ttl_seconds',
      says: 'a code lives 2 s but the next may be asked only after 60 s (otp.resend_cooldown_seconds): whoever lets one expire waits 58 s for another',
    });
  });

  it('warns of WhatsApp named for a region no WhatsApp provider serves, and of a Cloud API provider without its webhook secret', () => {
    const meta = {
      kind: 'whatsapp_cloud',
      name: 'meta',
      countries: ['BR'],
      phone_number_id: '1',
      access_token: 't',
      template: 'otp_code',
    };
    const warnings = configWarnings(
      testConfig({
        ...upstreams,
        sms: { ...upstreams.sms, providers: [meta], channels: { IT: ['whatsapp', 'sms'], BR: ['whatsapp', 'sms'] } },
      }),
      'test',
    );
    expect(warnings).toEqual([
      {
        key: 'sms.channels',
        says: 'whatsapp is named for IT but no WhatsApp provider (whatsapp_cloud, twilio_whatsapp) serves it: those phones get SMS',
      },
      {
        key: 'sms.providers',
        says: 'a whatsapp_cloud provider has no app_secret: its webhook is refused, so an unread or failed WhatsApp message never sends the next code by SMS',
      },
    ]);
    expect(
      configWarnings(
        testConfig({
          ...upstreams,
          sms: {
            ...upstreams.sms,
            providers: [{ ...meta, countries: [], app_secret: 's' }],
            channels: { IT: ['whatsapp', 'sms'] },
          },
        }),
        'test',
      ),
    ).toEqual([]);
  });
});
