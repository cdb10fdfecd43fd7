import { randomBytes } from 'node:crypto';
import type { Config } from '../core/config/schema';
import { createLogger, createOtpLogger, type Logger } from '../core/logger';
import { createOtpService, type OtpService } from './otp/service';
import { createMetrics, type Metrics } from '../core/metrics';
import { createMailingListClient, type MailingListClient } from '../clients/mailing-list';
import { createFeedsClient, type FeedsClient } from '../clients/feeds';
import { createRecommendationsClient, type RecommendationsClient } from '../clients/recommendations';
import { createIdentityClient, type IdentityClient } from '../clients/identity';
import { warnWhenGuardOff } from './guard';
import type Redis from 'ioredis';
import { createRedis } from '../core/redis';
import { createRedisOtpStore } from './otp/redis-store';
import { createMemoryRateLimiter, type RateLimiter } from './limits/rate-limiter';
import { createRedisRateLimiter } from './limits/redis-rate-limiter';
import { createAbuseLimits, type AbuseLimits } from './limits/abuse-limits';
import { createCollectorClient, type CollectorClient } from '../clients/collector';
import { createLoginIngest, type LoginIngest } from './ingest';
import { phoneBelongsToEmail } from './accounts/phone-owner';

/*
 * Everything an action may call, built once per process from the configuration.
 * Tests build it with fakes through `overrides`; nothing reaches for globals.
 */
export interface Deps {
  config: Config;
  log: Logger;
  /** SPEC.md's OTP debug log: its own file, its own prefix. */
  otpLog: Logger;
  /** Milliseconds since the epoch; injectable so tests control time. */
  now: () => number;
  /** HMAC key for codes and proofs: `security.secret`, or a per-process random one outside production. */
  secret: string;
  /** One-time codes: generate, send (SMS, mail), verify; its store decides readiness. */
  otp: OtpService;
  /** Newsletter subscriptions (one call per headline). */
  mailingList: MailingListClient;
  /** Newsletter feeds, cached, with the last good copy kept for outages. */
  feeds: FeedsClient;
  /** Content-recommendation widgets. */
  recommendations: RecommendationsClient;
  /** The external identity provider (SPEC.md's identity calls). */
  identity: IdentityClient;
  /** Prometheus metrics of this app; the counting functions are documented in src/metrics.ts. */
  metrics: Metrics;
  /** The user collector (SPEC.md's login ingest endpoint); `configured` false when no base_url. */
  collector: CollectorClient;
  /** Background delivery of {uid, accessToken} to the collector after every issued token. */
  loginIngest: LoginIngest;
  /** The shared Redis connection when `otp.store` is `redis` (OTP records, rate limits, ingest queue). */
  redis?: Redis;
  /** Abuse-limit counters, in the same store as the codes so limits hold across instances. */
  rateLimiter: RateLimiter;
  /** The abuse limits of docs/abuse.md, counted in `rateLimiter`. */
  limits: AbuseLimits;
  /** True when the store (and whatever else readiness needs) answers. */
  ready(): Promise<boolean>;
  /** Releases sockets, timers and files. */
  close(): Promise<void>;
}

export type DepsOverrides = Partial<Deps>;

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const log = overrides.log ?? createLogger(config.log.level);
  const secret = config.security.secret || randomBytes(32).toString('hex');
  if (!config.security.secret && !overrides.secret) {
    log.warn('security.secret is not set: using a random per-process secret (codes and proofs do not survive a restart or cross instances)');
  }
  warnWhenGuardOff(config, log);
  const closers: Array<() => Promise<void> | void> = [];
  const collector = overrides.collector ?? createCollectorClient(config, log);
  const redis = overrides.redis ?? (config.otp.store === 'redis' ? createRedis(config, log) : undefined);
  // Pushed first, so closed last (closers run in reverse): everything else may still use it while closing.
  if (redis && !overrides.redis) closers.push(() => redis.disconnect());
  const prefix = config.redis.key_prefix;
  const deps: Deps = {
    config,
    log,
    otpLog: overrides.otpLog ?? createOtpLogger(config.otp.log_file, config.log.level),
    now: Date.now,
    secret,
    otp:
      overrides.otp ??
      createOtpService(config, log, () => deps, closers, {
        ...(redis ? { store: createRedisOtpStore(redis, { prefix }) } : {}),
        sameAccount: (phone, email) => phoneBelongsToEmail(deps, phone, email),
      }),
    mailingList: overrides.mailingList ?? createMailingListClient(config, log),
    // Read through deps.now so tests that move the clock move the feed cache too.
    feeds: overrides.feeds ?? createFeedsClient(config, log, () => deps.now()),
    recommendations: overrides.recommendations ?? createRecommendationsClient(config, log),
    identity: overrides.identity ?? createIdentityClient(config, log),
    metrics: overrides.metrics ?? createMetrics(),
    collector,
    loginIngest: overrides.loginIngest ?? createLoginIngest(config, log, { collector, observer: () => deps.metrics, redis }),
    redis,
    rateLimiter: overrides.rateLimiter ?? (redis ? createRedisRateLimiter(redis, prefix) : createMemoryRateLimiter()),
    limits: overrides.limits ?? createAbuseLimits(config, () => deps.rateLimiter, () => deps.now(), (limit) => deps.metrics.rateLimitRefused(limit)),
    ready: () => deps.otp.ready(),
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
    ...overrides,
  };
  closers.push(() => deps.metrics.close());
  // Closed first (closers run in reverse): pending ingests get the grace period, still counted.
  closers.push(() => deps.loginIngest.close());
  return deps;
}
