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

export const showsBanner = ({ sandbox, production, terminal }: BannerSituation): boolean => sandbox && terminal && !production;

/** The sandbox's Twilio fake: its keys are made per start, so receipts signed with them cannot be forged from the code. */
export interface FakeTwilio {
  account_sid: string;
  auth_token: string;
}

/** The banner for a service listening at `url` (http://host:port). */
export function banner(url: string, twilio?: FakeTwilio): string {
  return [
    '',
    `  Login frontend API, sandbox: ${url}`,
    '',
    `  Try it        ${url}/demo          log in as a person would (seeded users, codes in the outbox)`,
    `  Journeys      ${url}/flows         every step, with requests and answers that run here`,
    `  Codes         ${url}/_sandbox/outbox.html   every SMS and mail the fake gateways received`,
    `  API           ${url}/openapi.json`,
    ...(twilio ? [`  Twilio fake   account ${twilio.account_sid}, auth token ${twilio.auth_token} (new at each start)`] : []),
    '',
    '  Stop with Ctrl+C.',
    '',
    '',
  ].join('\n');
}
