import type { Environment } from './load';
import type { Config } from './schema';

/*
 * What a configuration leaves out or gets backwards without being invalid: an upstream nobody
 * configured (the first email login would answer "Nessun canale di invio configurato"), a code
 * that expires before another may be asked. One warn line each at start (src/service.ts), and
 * on /readyz for an operator, beside the weakened defences (weakened.ts).
 */

export interface ConfigWarning {
  key: string;
  says: string;
}

/**
 * `environment`: production's warnings speak of production (the sandbox it refuses is no way
 * out there) and add what only matters there, such as metrics nobody can scrape.
 */
export function configWarnings(config: Config, environment: Environment): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const add = (on: boolean, key: string, says: string) => {
    if (on) warnings.push({ key, says });
  };
  const { identity, mail, sms, user_collector: collector, otp } = config;
  // Every identity call has a full-URL override; one of them set is a deliberate partial set-up.
  const identityUrls = [
    identity.base_url,
    identity.user_update_url,
    identity.user_get_v3_url,
    identity.users_get_url,
    identity.token_url,
    identity.user_search_url,
    identity.user_access_list_url,
    identity.identity_token_url,
  ];
  // Outside production, anything configured turns the default sandbox off: say so where it leaves a gap.
  const hint =
    config.sandbox.enabled || environment === 'production'
      ? ''
      : ' (anything configured turns the default sandbox off; sandbox.enabled: true runs against its fakes)';
  add(
    identityUrls.every((url) => url === ''),
    'identity.base_url',
    `no identity provider: lookups, logins, registrations and tokens answer upstream_error${hint}`,
  );
  add(
    mail.host === '',
    'mail.host',
    `no mail transport: a code to an email address is refused (channel_not_configured)${hint}`,
  );
  add(
    sms.api_url === '' && sms.providers.length === 0,
    'sms.providers',
    `no SMS provider: a code to a phone is refused (channel_not_configured)${hint}`,
  );
  // WhatsApp named for a region no WhatsApp provider serves: its phones silently get SMS.
  const whatsappProviders = sms.providers.filter((p) => p.kind === 'whatsapp_cloud' || p.kind === 'twilio_whatsapp');
  const unserved = Object.entries(sms.channels)
    .filter(
      ([region, channels]) =>
        channels.includes('whatsapp') &&
        !whatsappProviders.some(
          (p) => p.countries.length === 0 || region === 'DEFAULT' || p.countries.includes(region),
        ),
    )
    .map(([region]) => region);
  add(
    unserved.length > 0,
    'sms.channels',
    `whatsapp is named for ${unserved.join(', ')} but no WhatsApp provider (whatsapp_cloud, twilio_whatsapp) serves it: those phones get SMS`,
  );
  // Without receipts a WhatsApp message is never known unread or failed: the next code cannot move to SMS.
  add(
    sms.providers.some((p) => p.kind === 'whatsapp_cloud' && p.app_secret === ''),
    'sms.providers',
    'a whatsapp_cloud provider has no app_secret: its webhook is refused, so an unread or failed WhatsApp message never sends the next code by SMS',
  );
  add(collector.base_url === '', 'user_collector.base_url', `no user collector: logins are not posted anywhere${hint}`);
  add(
    otp.ttl_seconds < otp.resend_cooldown_seconds,
    'otp.ttl_seconds',
    `a code lives ${otp.ttl_seconds} s but the next may be asked only after ${otp.resend_cooldown_seconds} s (otp.resend_cooldown_seconds): whoever lets one expire waits ${otp.resend_cooldown_seconds - otp.ttl_seconds} s for another`,
  );
  // /metrics on the service port needs its token, and without metrics.port there is no other: no scrape, no alert.
  add(
    environment === 'production' && config.metrics.token === '' && config.metrics.port === 0,
    'metrics.port',
    'the metrics cannot be scraped: /metrics on the service port needs metrics.token, and no metrics.port opens a listener for Prometheus, so no alert can fire',
  );
  return warnings;
}
