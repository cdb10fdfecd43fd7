import type { Config } from './core/config/schema';

/*
 * What a person who just typed `npm start` needs to know, on their terminal: where the service
 * is and where to go in it. Only for the sandbox on a terminal (a TTY); a process manager, a
 * container log or production gets the JSON lines alone.
 */

export interface BannerSituation {
  sandbox: boolean;
  production: boolean;
  terminal: boolean;
}

export const showsBanner = ({ sandbox, production, terminal }: BannerSituation): boolean =>
  sandbox && terminal && !production;

/** The sandbox's SMS fakes as the configuration points at them, with the keys to point another service at them (the Twilio fake's are made per start). */
function fakeLines(sms: Config['sms']): string[] {
  const lines = sms.providers.map((provider) => {
    switch (provider.kind) {
      case 'twilio':
      case 'twilio_whatsapp':
        return `Twilio        ${provider.api_url}   account ${provider.account_sid}, auth token ${provider.auth_token} (new at each start)`;
      case 'whatsapp_cloud':
        return `WhatsApp      ${provider.api_url}   Bearer ${provider.access_token}, app secret ${provider.app_secret} (new at each start)`;
      default:
        return `SMS gateway   ${provider.api_url || sms.api_url}   Bearer ${provider.api_key || sms.api_key}`;
    }
  });
  return lines.map((line, i) => `  ${i === 0 ? 'Fakes' : '     '}         ${line}`);
}

/** The banner for a service listening at `url` (http://host:port), on the sandbox's configuration. */
export function banner(url: string, sms?: Config['sms']): string {
  return [
    '',
    `  Login frontend API, sandbox: ${url}`,
    '',
    `  Try it        ${url}/demo          log in as a person would (seeded users, codes in the outbox)`,
    `  Journeys      ${url}/flows         every step, with requests and answers that run here`,
    `  Codes         ${url}/_sandbox/outbox.html   every SMS and mail the fake gateways received`,
    `  API           ${url}/openapi.json`,
    ...(sms ? fakeLines(sms) : []),
    '',
    '  Stop with Ctrl+C.',
    '',
    '',
  ].join('\n');
}
