import type { CollectorClient } from '../clients/collector';
import type { FeedsClient } from '../clients/feeds';
import type { IdentityClient } from '../clients/identity';
import type { MailingListClient } from '../clients/mailing-list';
import type { RecommendationsClient } from '../clients/recommendations';
import type { Config } from '../core/config/schema';
import type { RequestContext } from '../core/context';
import type { Logger } from '../core/logger';
import type { RedisConnection } from '../core/redis';
import type { Metrics } from '../core/metrics';
import type { Tracing } from '../core/tracing';
import type { FunnelTally } from './funnel/tally';
import type { LoginIngest } from './ingest';
import type { AbuseLimits } from './limits/abuse-limits';
import type { ChallengeGate } from './limits/challenge';
import type { VerifiedHistory } from './limits/verified-history';
import type { KeyChecks } from './keys';
import type { RateLimiter } from './limits/rate-limiter';
import type { OtpService } from './otp/service';
import type { OtpStore } from './otp/store';
import type { ProofKey } from './proofs';
import type { Mailer } from '../clients/mailer';
import type { SmsServices } from './sms';
import type { Passkeys } from './passkeys';
import type { Database } from '../core/database';

/*
 * Everything an action may call, built once per process from the configuration.
 * Tests build it with fakes through `overrides`; nothing reaches for globals.
 */
export interface Deps {
  config: Config;
  log: Logger;
  /** The OTP debug log: its own file, its own prefix. */
  otpLog: Logger;
  /** Milliseconds since the epoch; injectable so tests control time. */
  now: () => number;
  /** HMAC key for codes and proofs: `security.secret`, or a per-process random one outside production. */
  secret: string;
  /** The key proofs are signed and checked with, derived from `secret` once (src/domain/proofs.ts). */
  proofKey: ProofKey;
  /** One-time codes: generate, send (SMS, mail), verify; its store decides readiness. */
  otp: OtpService;
  /** Newsletter subscriptions (one call per headline). */
  mailingList: MailingListClient;
  /** Newsletter feeds, cached, with the last good copy kept for outages. */
  feeds: FeedsClient;
  /** Content-recommendation widgets. */
  recommendations: RecommendationsClient;
  /** The external identity provider (docs/contract.md#upstream-calls). */
  identity: IdentityClient;
  /** The SMS providers (failover, breakers), the message ledger, receipts and the pumping defence (docs/sms.md). */
  sms: SmsServices;
  /** Prometheus metrics of this app; the counting functions are documented in src/core/metrics.ts. */
  metrics: Metrics;
  /** OpenTelemetry traces (`tracing.enabled`); absent when off, so a request only checks for it. */
  tracing?: Tracing;
  /** The user collector (the login ingest endpoint); `configured` false when no base_url. */
  collector: CollectorClient;
  /** Background delivery of {uid, accessToken} to the collector after every issued token. */
  loginIngest: LoginIngest;
  /** The shared Redis connection when `otp.store` is `redis` (OTP records, rate limits, ingest queue): one server or a cluster. */
  redis?: RedisConnection;
  /** Abuse-limit counters, in the same store as the codes so limits hold across instances. */
  rateLimiter: RateLimiter;
  /** The abuse limits of docs/abuse.md, counted in `rateLimiter`. */
  limits: AbuseLimits;
  /** The bot challenge asked before a code or a mail is sent (src/domain/limits/challenge.ts), its signals counted in `rateLimiter`. */
  challenge: ChallengeGate;
  /** Who had a code verified lately (src/domain/limits/verified-history.ts), in `rateLimiter`: the pumping caps and the bot challenge's wider signals spare them. */
  history: VerifiedHistory;
  /** The keys that open internal surfaces, compared and their wrong guesses counted in `rateLimiter` (src/domain/keys.ts). */
  keys: KeyChecks;
  /** The journey funnel's counters (docs/funnel.md), in the same store as the codes so they add up across instances. */
  funnel: FunnelTally;
  /** The passkeys' credentials in the durable store (docs/passkeys.md); its database opened only when enabled. */
  passkeys: Passkeys;
  /** True when the store (and whatever else readiness needs) answers. */
  ready(): Promise<boolean>;
  /** Forgets codes, limits and the SMS ledger (the sandbox's reset); absent when they live in Redis. */
  reset?: () => void;
  /** Releases sockets, timers and files. */
  close(): Promise<void>;
}

/** Any piece replaced (tests, the benchmark); `otpStore` and `mailer` replace pieces inside the OTP service, `database` the passkeys' (left open at close). */
export type DepsOverrides = Partial<Deps> & { otpStore?: OtpStore; mailer?: Mailer; database?: Database };

/** One request and the process's dependencies: what actions, the flow runner and the domain receive. */
export interface ServiceContext extends RequestContext {
  deps: Deps;
}
