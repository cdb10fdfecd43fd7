import { randomBytes } from 'node:crypto';
import type { Config } from '../core/config/schema';
import { createLogger, createOtpLogger } from '../core/logger';
import { createOtpService } from './otp/service';
import { createMetrics } from '../core/metrics';
import { createTracing } from '../core/tracing';
import { createMailingListClient } from '../clients/mailing-list';
import { createFeedsClient } from '../clients/feeds';
import { createRecommendationsClient } from '../clients/recommendations';
import { createIdentityClient } from '../clients/identity';
import { createRedis } from '../core/redis';
import { createRedisOtpStore } from './otp/redis-store';
import { createMemoryOtpStore } from './otp/memory-store';
import { createMailer } from '../clients/mailer';
import { createMemoryRateLimiter } from './limits/rate-limiter';
import { createRedisRateLimiter } from './limits/redis-rate-limiter';
import { createAbuseLimits } from './limits/abuse-limits';
import { createChallengeGate } from './limits/challenge';
import { createVerifiedHistory } from './limits/verified-history';
import { createCaptchaClient } from '../clients/captcha';
import { createKeyChecks } from './keys';
import { createCollectorClient } from '../clients/collector';
import { createSmsServices } from './sms';
import { createMemorySmsStore } from './sms/store';
import { confirmedEmailOfPhone } from './sms/account-email';
import { createLoginIngest } from './ingest';
import { phoneBelongsToEmail } from './accounts/phone-owner';
import { deriveProofKey } from './proofs';
import { provenBy, reachedOf } from './otp/reached';
import { smsFacts } from './phone';
import { isApiError } from '../core/errors';
import { createFunnelTally } from './funnel/tally';
import { createMemoryFunnelStore } from './funnel/memory-store';
import { createRedisFunnelStore } from './funnel/redis-store';
import { journeyIdleMs } from './funnel/store';
import { createPasskeys } from './passkeys';

import type { Deps, DepsOverrides } from './service-context';

export type { Deps, DepsOverrides, ServiceContext } from './service-context';

/*
 * Builds every dependency once, in one place, in the order they need each other: no closure
 * over the container, nothing module-global. Tests replace any piece through `overrides`
 * (a fake clock as `now`, a fake client), and what is built after it uses the replacement.
 */
export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const log = overrides.log ?? createLogger(config.log.level);
  const secret = overrides.secret ?? (config.security.secret || randomBytes(32).toString('hex'));
  if (!config.security.secret && !overrides.secret) {
    log.warn(
      'security.secret is not set: using a random per-process secret (codes and proofs do not survive a restart or cross instances)',
    );
  }
  const now = overrides.now ?? Date.now;
  const otpLog = overrides.otpLog ?? createOtpLogger(config.otp.log_file, config.log.level);
  const metrics = overrides.metrics ?? createMetrics(config);
  const closers: Array<() => Promise<void> | void> = [];
  const tracing = 'tracing' in overrides ? overrides.tracing : createTracing(config.tracing);
  // Pushed first, so closed last: the spans of everything closing before it are still sent.
  if (tracing && !overrides.tracing) closers.push(() => tracing.shutdown());
  const redis = overrides.redis ?? (config.otp.store === 'redis' ? createRedis(config, log) : undefined);
  // Pushed first, so closed last (closers run in reverse): everything else may still use it while closing.
  if (redis && !overrides.redis) closers.push(() => redis.disconnect());
  const prefix = config.redis.key_prefix;
  // Every client reports each upstream call; metrics count them, from 0 for every endpoint a client declares.
  const clients = { observe: metrics.observeUpstream, declare: metrics.declareUpstream };

  const identity = overrides.identity ?? createIdentityClient(config, log, clients);
  const collector = overrides.collector ?? createCollectorClient(config, log, clients);
  // What the sandbox's reset forgets: codes, limits and the SMS ledger, when each lives in this process.
  const inMemory: Array<() => void> = [];
  const forgettable = <T extends { clear(): void }>(store: T): T => (inMemory.push(() => store.clear()), store);
  const rateLimiter =
    overrides.rateLimiter ?? (redis ? createRedisRateLimiter(redis, prefix) : forgettable(createMemoryRateLimiter()));
  const limits =
    overrides.limits ?? createAbuseLimits(config, rateLimiter, now, (limit) => metrics.rateLimitRefused(limit));
  // One verified history, read by the pumping caps and the bot challenge alike, recorded below for every address a code proved.
  const history =
    overrides.history ??
    createVerifiedHistory(rateLimiter, { secret, days: config.rate_limits.verified_history_days, now });
  const keys =
    overrides.keys ?? createKeyChecks(config, rateLimiter, now, () => metrics.rateLimitRefused('wrong_keys_per_ip'));
  const sms =
    overrides.sms ??
    createSmsServices(config, {
      log,
      now,
      secret,
      history,
      metrics,
      redis,
      store: redis ? undefined : forgettable(createMemorySmsStore({ maxEntries: config.sms.ledger.max_entries })),
      clients,
      confirmedEmailOf: (ctx, phone) => confirmedEmailOfPhone({ identity, config }, ctx, phone),
    });
  const otpStore =
    overrides.otpStore ??
    (redis
      ? createRedisOtpStore(redis, { prefix })
      : forgettable(createMemoryOtpStore({ maxRecords: config.otp.max_records, now })));
  const challenge =
    overrides.challenge ??
    createChallengeGate(config, {
      limiter: rateLimiter,
      now,
      secret,
      log,
      metrics,
      // Spent where proofs are: once across every instance sharing the store.
      spend: (id, untilMs) => otpStore.spendProof(id, untilMs),
      history,
      // Beside the SMS it saved, for the operator: never in the request's way.
      record: (decision) =>
        void sms.ledger
          .recordChallenge(decision)
          .catch((err: unknown) =>
            log.warn({ err: isApiError(err) ? err.reason : 'error' }, 'sms ledger: could not record a challenge'),
          ),
      destination: (e164) => sms.pumping.destination(e164, smsFacts(e164).region ?? ''),
      placeOf: (e164) => ({ country: smsFacts(e164).region ?? '', range: sms.pumping.rangeOf(e164) }),
      captcha: createCaptchaClient(config, log, clients),
    });
  const otp =
    overrides.otp ??
    createOtpService(config, {
      log,
      otpLog,
      now,
      secret,
      limits,
      challenge,
      metrics,
      store: {
        ...otpStore,
        // Conversion: a code verified is its ledger entry's and its range's (docs/sms.md). Told after the answer is known, never in its way.
        async verify(key, hash, at, policy) {
          const result = await otpStore.verify(key, hash, at, policy);
          if (result.outcome === 'ok') {
            const reached = reachedOf(result.to);
            sms
              .verified(reached, result.sentAt)
              .catch((err: unknown) =>
                log.warn(
                  { err: isApiError(err) ? err.reason : 'error' },
                  'sms ledger: could not record a verification',
                ),
              );
            // What the code proved has a verified history, once, for both defences that spare it: the pumping caps and the bot challenge's wider signals (docs/security.md).
            for (const address of Object.values(provenBy(reached).verified)) {
              history
                .record(address)
                .catch((err: unknown) =>
                  log.warn(
                    { err: isApiError(err) ? err.reason : 'error' },
                    'verified history: could not record a verification',
                  ),
                );
            }
          }
          return result;
        },
      },
      sms: sms.router,
      smsPolicy: {
        admit: (e164, region) => sms.pumping.admit(e164, region),
        fallbackEmail: (ctx, phone) => sms.fallbackEmail(ctx, phone),
        checkChannel: (region, requested, field) => sms.channels.check(region, requested, field),
        channels: (e164, region, requested) => sms.channels.plan(e164, region, requested),
        emailSent: (email) => sms.ledger.recordEmail(email),
        refused: (reason, region) => {
          metrics.smsRefused(reason, region);
          log.warn({ event: 'sms_refused', reason, country: region }, 'sms refused');
        },
      },
      mailer: overrides.mailer ?? createMailer(config, log),
      sameAccount: (ctx, phone, email) => phoneBelongsToEmail({ identity, config }, ctx, phone, email),
    });
  if (!overrides.otp) closers.push(() => otp.close());
  const loginIngest = overrides.loginIngest ?? createLoginIngest(config, log, { collector, observer: metrics, redis });
  const funnel =
    overrides.funnel ??
    createFunnelTally(
      redis
        ? createRedisFunnelStore(redis, prefix, { idleMs: journeyIdleMs(config) })
        : createMemoryFunnelStore({ idleMs: journeyIdleMs(config) }),
      { flushMs: config.funnel.flush_ms, now, log },
    );
  // Before the connection closes (closers run in reverse): the last counts are written.
  if (!overrides.funnel) closers.push(() => funnel.close());
  const passkeys = overrides.passkeys ?? createPasskeys(config, log, overrides.database);
  if (!overrides.passkeys) closers.push(() => passkeys.close());
  // Closed first (closers run in reverse): pending ingests get the grace period, still counted.
  closers.push(() => loginIngest.close());

  return {
    config,
    log,
    otpLog,
    now,
    secret,
    proofKey: overrides.proofKey ?? deriveProofKey(secret),
    otp,
    mailingList: overrides.mailingList ?? createMailingListClient(config, log, clients),
    feeds: overrides.feeds ?? createFeedsClient(config, log, { ...clients, now }),
    recommendations: overrides.recommendations ?? createRecommendationsClient(config, log, clients),
    identity,
    metrics,
    tracing,
    sms,
    collector,
    loginIngest,
    redis,
    rateLimiter,
    limits,
    challenge,
    history,
    keys,
    funnel,
    passkeys,
    ready: overrides.ready ?? (() => otp.ready()),
    // Only where nothing lives in a shared store: a reset must never reach another instance's or a real service's data.
    reset: redis ? undefined : () => inMemory.forEach((clear) => clear()),
    close:
      overrides.close ??
      (async () => {
        for (const close of closers.reverse()) await close();
      }),
  };
}
