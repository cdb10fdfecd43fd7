import type { Service } from '../../src/service';
import type { RedisServer } from '../../test/support/redis-server';
import { every, SEEDED_LOGINS, type Client } from './traffic';

/*
 * The drill's table: each alert of ops/prometheus/alerts.yml, the fault it exists for, and the
 * time it is documented to fire within once that fault starts (docs/operations.md, "Incident
 * drill"). Another alert is a row in ALERTS; a fault nothing plays yet is an entry in FAULTS:
 * what it configures, the traffic that runs before and during it, and how it is injected.
 */

type Tree = Record<string, unknown>;

export interface DrillContext {
  service: Service;
  client: Client;
  redis?: RedisServer;
  factor: number;
}

export interface Fault {
  /** What breaks, as the drill's line says it. */
  says: string;
  /** A Redis for the service's store (otp.store: redis). */
  redis?: boolean;
  /** Configuration beyond the drill's own (drill/run.ts). */
  config?: Tree;
  /** Real seconds of ordinary traffic before the fault (a baseline the alert compares with); 3 unless given. */
  baselineSeconds?: number;
  /** Traffic from start to end: stops are returned. */
  traffic?(ctx: DrillContext): Array<() => void>;
  /** The fault itself; its own traffic (a campaign, a guesser) as stops. */
  inject(ctx: DrillContext): Promise<Array<() => void> | void>;
}

/** Codes asked for by phone, one person and address each. */
const codeSends = (everyMs: number) => (ctx: DrillContext) => [
  every(everyMs, () => ctx.client.post('otp_generate', { uid: ctx.client.phone() })),
];
/** Logins by code of the sandbox's accounts, each one after the other (a new code replaces the last), to the success screen (90). */
const logins = (accounts: readonly string[]) => (ctx: DrillContext) =>
  accounts.map((account) => every(1050, () => ctx.client.login(account), 1));
/** The identity provider asked (search_user: user_search). */
const lookups = (everyMs: number) => (ctx: DrillContext) => [
  every(everyMs, () => ctx.client.post('search_user', { phone: ctx.client.phone() })),
];

export const FAULTS = {
  'sms-down': {
    says: 'every SMS provider answering 503, WhatsApp configured and up',
    traffic: codeSends(250),
    inject: async ({ client }) => {
      await client.fault('sms/gateway/error_5xx');
      await client.fault('sms/twilio/error_5xx');
    },
  },
  'sms-provider-down': {
    says: 'one SMS provider answering 503 until its breaker opens, the other sending',
    traffic: codeSends(250),
    inject: async ({ client }) => client.fault('sms/gateway/error_5xx'),
  },
  'whatsapp-down': {
    says: 'every WhatsApp provider answering 503 while SMS works',
    config: { sms: { channels: { default: ['whatsapp', 'sms'] } } },
    traffic: codeSends(250),
    inject: async ({ client }) => {
      await client.fault('sms/whatsapp/error_5xx');
      await client.fault('sms/twilio-whatsapp/error_5xx');
    },
  },
  'identity-5xx': {
    says: 'the identity provider answering 503',
    traffic: lookups(200),
    inject: async ({ client }) => client.fault('upstream/idp/error_5xx'),
  },
  'identity-timeout': {
    says: 'the identity provider not answering (3 s timeout)',
    config: { identity: { timeout_seconds: 3 } },
    traffic: lookups(200),
    inject: async ({ client }) => client.fault('upstream/idp/timeout'),
  },
  'collector-down': {
    says: 'the user collector answering 503, no retries left: ingest drops events',
    config: { user_collector: { timeout: 1, max_retries: 0 } },
    traffic: logins(SEEDED_LOGINS.slice(0, 1)),
    inject: async ({ client }) => client.fault('upstream/collector/error_5xx'),
  },
  'collector-backlog': {
    says: 'the user collector not answering (1 s timeout): events wait for their retries',
    config: { user_collector: { timeout: 1, max_retries: 20 } },
    traffic: logins(SEEDED_LOGINS.slice(0, 1)),
    inject: async ({ client }) => client.fault('upstream/collector/timeout'),
  },
  'redis-down': {
    says: 'Redis stopped',
    redis: true,
    traffic: (ctx) => [...codeSends(300)(ctx), every(500, () => fetch(`${ctx.service.url}/readyz`))],
    inject: async ({ redis }) => redis!.kill(),
  },
  'service-down': {
    says: 'the service stopped (nothing to scrape)',
    traffic: codeSends(1000),
    inject: async ({ service }) => service.close(),
  },
  pumping: {
    says: 'a pumping campaign, one new number of one range a request from a new address, answered by the challenge',
    config: {
      rate_limits: { enabled: true },
      challenge: { mode: 'adaptive' },
      sms: { pumping: { prefix_sends_per_hour: 10 } },
    },
    traffic: (ctx) => [every(1000, () => ctx.client.codeVerified(ctx.client.phone('3477')))],
    inject: async ({ client }) => [every(250, () => client.post('otp_generate', { uid: client.phone('3339') }))],
  },
  'brute-force': {
    says: 'a run of wrong codes, three guesses on each code asked for',
    traffic: (ctx) => [every(1000, () => ctx.client.codeVerified(ctx.client.phone()))],
    inject: async ({ client }) => [
      every(250, async () => {
        const address = client.address();
        const email = `victim.${client.phone().slice(3)}@example.com`;
        await client.post('otp_generate', { uid: email }, address);
        for (const guess of ['000000', '111111', '222222'])
          await client.post('verify_otp', { email, otp_code: guess }, address);
      }),
    ],
  },
  'sms-cap': {
    says: 'new numbers to one country past its hourly cap (sms.pumping.country_sends_per_hour: 5)',
    config: { rate_limits: { enabled: true }, sms: { pumping: { country_sends_per_hour: 5 } } },
    inject: async ({ client }) => [every(500, () => client.post('otp_generate', { uid: client.phone() }))],
  },
  'codes-lost': {
    says: 'codes no longer arriving: accepted by the provider, receipts failed, nobody completes',
    // Every code by Twilio, whose fake sends receipts: the gateway is down from the start.
    baselineSeconds: 15,
    traffic: (ctx) => {
      void ctx.client.fault('sms/gateway/error_5xx');
      // One person's logins are too few for the rules' 30 starts an hour (scaled): new numbers start and register.
      return [
        ...logins(SEEDED_LOGINS.slice(0, 1))(ctx),
        every(400, () => ctx.client.post('FeLogin', { identifier: ctx.client.phone() })),
      ];
    },
    inject: async ({ client }) => client.fault('sms/twilio/undelivered'),
  },
} satisfies Record<string, Fault>;

export type FaultName = keyof typeof FAULTS;

export interface DrillRow {
  fault: FaultName;
  /** Documented: the alert fires within this many seconds of the fault starting (scaled by the drill's factor). */
  within: number;
  /** Seconds the fault takes in real time whatever the factor (timeouts, retries, breakers opening): added unscaled. */
  realSeconds?: number;
}

const MINUTE = 60;
const HOUR = 3600;

/** Every alert of ops/prometheus/alerts.yml: test/scripts/drill.test.ts refuses an alert without a row. */
export const ALERTS: Record<string, DrillRow> = {
  LoginFrontendAbsent: { fault: 'service-down', within: 5 * MINUTE },
  LoginFrontendServerErrors: { fault: 'redis-down', within: 6 * MINUTE },
  LoginFrontendStoreUnreachable: { fault: 'redis-down', within: 2 * MINUTE },
  UpstreamErrors: { fault: 'identity-5xx', within: 6 * MINUTE },
  UpstreamSlow: { fault: 'identity-timeout', within: 15 * MINUTE, realSeconds: 3 },
  SmsProviderBreakerOpen: { fault: 'sms-provider-down', within: 6 * MINUTE, realSeconds: 2 },
  SmsAllProvidersDown: { fault: 'sms-down', within: 2 * MINUTE, realSeconds: 2 },
  WhatsAppAllProvidersDown: { fault: 'whatsapp-down', within: 2 * MINUTE, realSeconds: 2 },
  OtpCodesNotSent: { fault: 'sms-down', within: 11 * MINUTE },
  SmsDeliveryRateDropping: { fault: 'codes-lost', within: HOUR + 15 * MINUTE, realSeconds: 3 },
  SmsPumping: { fault: 'pumping', within: 15 * MINUTE, realSeconds: 2 },
  ChallengeShareHigh: { fault: 'pumping', within: 25 * MINUTE, realSeconds: 2 },
  SmsCapReached: { fault: 'sms-cap', within: 2 * MINUTE, realSeconds: 3 },
  OtpVerifyFailuresHigh: { fault: 'brute-force', within: 10 * MINUTE },
  LoginCompletionFalling: { fault: 'codes-lost', within: HOUR + 30 * MINUTE, realSeconds: 10 },
  // One login a second (the sandbox's one account, its code cooldown): the backlog passes 100 in real time.
  IngestBacklogGrowing: { fault: 'collector-backlog', within: 20 * MINUTE, realSeconds: 120 },
  IngestEventsDropped: { fault: 'collector-down', within: 2 * MINUTE, realSeconds: 3 },
};

/** Ordinary traffic, on which no alert may fire: resends, mistyped codes, a busy but honest range, a slow upstream within its timeout. */
export const HEALTHY: Fault = {
  says: 'ordinary traffic: resends, wrong codes then the right one, codes never used, a busy honest range, the identity provider slow within its timeout',
  // Minutes of drill are hours to the scaled rules, not to the defence's hourly budgets: the sandbox's one account logs in
  // every second, so the per-identifier and per-range budgets are raised to what an hour of such traffic needs. Likewise
  // the velocity floors: a service started seconds ago has no hours of baseline, and the drill's honest range gets a new
  // number every 4 s (15 a minute, over the 5-a-minute floor a range has before its history says otherwise).
  config: {
    rate_limits: { enabled: true, sends_per_identifier_per_hour: 10_000, sends_per_recipient: 10_000 },
    challenge: { mode: 'adaptive', range_velocity_floor: 1_000, country_velocity_floor: 1_000 },
    identity: { timeout_seconds: 3 },
    sms: { pumping: { prefix_sends_per_hour: 10_000 } },
  },
  traffic: (ctx) => [
    ...logins(SEEDED_LOGINS.slice(0, 1))(ctx),
    every(1500, () => ctx.client.codeVerified(ctx.client.phone(), { resend: true })),
    every(3000, () => ctx.client.codeVerified(`person.${ctx.client.phone().slice(3)}@example.com`, { typo: true })),
    every(4000, () => ctx.client.codeVerified(ctx.client.phone('3477'))),
    // About one phone in six asks for a code and leaves: honest ranges convert well below 100 %.
    every(7000, () => ctx.client.codeAbandoned(ctx.client.phone())),
    every(500, () => ctx.client.post('search_user', { phone: ctx.client.phone() })),
  ],
  inject: async ({ client }) => client.fault('upstream/idp/slow?ms=800'),
};
