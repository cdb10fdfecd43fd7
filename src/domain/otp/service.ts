import type { Config } from '../../core/config/schema';
import type { CallContext } from '../../core/context';
import type { Mailer } from '../../clients/mailer';
import type { SmsClient } from '../../clients/sms';
import type { Logger } from '../../core/logger';
import { budgetOf } from '../../core/address';
import { isE164 } from '../phone';
import { createOtpHasher } from './code';
import { verifyFailure } from './errors';
import { createKeyNormaliser, maskOtpKey } from './key';
import type { OtpPolicy, OtpStore, VerifyOutcome } from './store';
import { reachedOf, type Reached } from './reached';
import type { AbuseLimits } from '../limits/abuse-limits';
import type { ChallengeGate } from '../limits/challenge';
import type { Metrics } from '../../core/metrics';
import { loadLocalizedTemplates, renderOtpMessage, type LocalizedTemplates, type OtpMessage } from './templates';
import { loadTestIdentifiers } from './test-numbers';
import { admit, smsReceiver } from './send/admit';
import { planRecipients } from './send/plan';
import { charge, issue } from './send/issue';
import { deliver } from './send/deliver';
import { answer, settle } from './send/settle';
import {
  guarded,
  type OtpSendRequest,
  type OtpSendResult,
  type PhoneSender,
  type SendEnv,
  type SmsSendPolicy,
} from './send/types';

/*
 * Generate, send and verify one-time codes. Action handlers (otp_generate, verify_otp,
 * otp_verify_local) and the login flows (FeLogin, FeVerifyOtp) all go through this service, so
 * the channel rules, the cooldown and the security floor live in one place.
 */

/** What the service is built from (the dependency container passes its own pieces). */
interface OtpServiceEnv {
  log: Logger;
  otpLog: Logger;
  now: () => number;
  secret: string;
  /** The abuse limits (deps.limits, docs/abuse.md). */
  limits: AbuseLimits;
  /** The bot challenge asked before a code is sent; none: never asked. */
  challenge?: ChallengeGate;
  metrics?: Pick<Metrics, 'codeSent' | 'verification' | 'rateLimitRefused'>;
}

interface OtpVerifyRequest {
  key: string;
  code: string;
}

/** One verification; `reached` (with `ok`) is what knowing the code proves: the addresses it went to. */
/** `sentAt`: when the accepted code was issued (epoch ms), so a flow can time the screen that waited for it. */
/** `journey`: the funnel's anonymous journey id the code's record carried, whatever the outcome. */
type Verification =
  | { outcome: 'ok'; reached: Reached; sentAt: number; journey?: string }
  | { outcome: Exclude<VerifyOutcome, 'ok'>; journey?: string };

export interface OtpService {
  /** Which channels are configured (the contract's skip rules). */
  readonly channels: { sms: boolean; email: boolean };
  readonly sms: PhoneSender;
  readonly mailer: Mailer;
  /** The languages codes can be sent in (templates/<locale>/), `mail.default_locale` among them. */
  readonly locales: readonly string[];
  /**
   * A phone as a code's SMS would be sent to it (E.164), after the rules of a real send: a valid
   * number, a mobile one, in an allowed region, under its per-recipient cap (counted). For a
   * message that is not a code (test_sms). Throws `invalid_request`, `region_not_allowed`,
   * `phone_not_mobile`, `rate_limited`.
   */
  smsRecipient(phone: string, field: string): Promise<string>;
  /** Throws ApiError: `already_sent`, `delivery_failed`, `channel_not_configured`, `invalid_request`, `region_not_allowed`, `phone_not_mobile`, `rate_limited`. */
  generate(ctx: CallContext, request: OtpSendRequest): Promise<OtpSendResult>;
  /** The outcome of one attempt; `ok` consumed the code and says where it had gone. */
  verify(ctx: CallContext, request: OtpVerifyRequest): Promise<Verification>;
  /** Like `verify`, but a failure is thrown as the ApiError the contract prescribes (docs/contract.md#errors); answers where the code had gone. */
  verifyOrThrow(ctx: CallContext, request: OtpVerifyRequest): Promise<Reached>;
  /** Records a proof id as spent in the store (atomic across instances); false when it already was. */
  spendProof(id: string, untilMs: number): Promise<boolean>;
  /** Gives a proof back when the change it authorised did not happen. */
  unspendProof(id: string): Promise<void>;
  /** Voids every proof naming `uid` issued before now (its email's owner just claimed it). */
  markAccountClaimed(uid: string): Promise<void>;
  /** When the account was last claimed (ms), or null. */
  accountClaimedAt(uid: string): Promise<number | null>;
  /** Holds a phone (E.164) dropped from an account for as long as a proof lives (`security.proof_ttl_seconds`): see OtpStore. */
  holdPhone(uid: string, phone: string): Promise<void>;
  heldPhoneOf(uid: string): Promise<string | null>;
  phoneHeldFor(phone: string): Promise<string | null>;
  releasePhone(uid: string): Promise<void>;
  /** The OTP message for `code` as it would be sent now, in `locale` (default `mail.default_locale`; diagnostics). */
  message(code: string, locale?: string): OtpMessage;
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/*
 * What the service is given, built once by the composition root (src/domain/deps.ts); the service
 * holds the rules only. Closing it closes the store and the mailer it was given (deps closes it).
 */
export interface OtpServiceOptions extends OtpServiceEnv {
  store: OtpStore;
  /**
   * Whether the identity provider shows this phone and this email on one account (otp_generate's rule 2:
   * a code to both). Without it, or when it says no or fails, the mail is not sent.
   */
  sameAccount?: (ctx: CallContext, phone: string, email: string) => Promise<boolean>;
  templates?: LocalizedTemplates;
  sms: PhoneSender | SmsClient;
  mailer: Mailer;
  smsPolicy?: SmsSendPolicy;
}

export function createOtpService(config: Config, options: OtpServiceOptions): OtpService {
  const { log, otpLog, now, secret } = options;
  const otp = config.otp;
  const policy: OtpPolicy = {
    ttlMs: otp.ttl_seconds * 1000,
    cooldownMs: otp.resend_cooldown_seconds * 1000,
    maxAttempts: otp.max_attempts,
  };
  const region = config.sms.default_region;
  // Toll-fraud guard: SMS only to these regions; by default only the default region (docs/abuse.md).
  const allowedRegions = (config.sms.allowed_regions.length > 0 ? config.sms.allowed_regions : [region]).map((r) =>
    r.toUpperCase(),
  );
  const normaliseKey = createKeyNormaliser(region);
  // Normalised once here, by the normaliser request keys go through (a send looks its key up as it is stored),
  // and before anything is opened, so a bad entry stops the start-up with nothing to release.
  const testIdentifiers = loadTestIdentifiers(config, normaliseKey, log);
  // Templates are read once, here: a missing or broken template stops the start-up, not a request.
  const templates = options.templates ?? loadLocalizedTemplates(config.mail.default_locale);
  const defaultTemplates = templates.get(config.mail.default_locale);
  if (!defaultTemplates) throw new Error(`templates: none for mail.default_locale "${config.mail.default_locale}"`);
  const webOtpDomain = config.sms.webotp_domain || undefined;
  const { store, sms, mailer, smsPolicy } = options;

  const hash = createOtpHasher(secret);

  /**
   * Checks `code` against the record of `rawKey` as it is stored. Records live under normalised
   * keys only, and a normalised phone is an E.164 string that normalises to itself, so a key
   * already written in E.164 (what frontends send back) is tried as given first: a record there
   * is its record, and the phone parse (the dearest step of a check) is skipped. Only when
   * nothing matched there is the key normalised, and checked again if that changed it, which
   * only happens where no record was (no wrong guess is counted twice).
   */
  const verifyUnderKey = async (
    rawKey: string,
    code: string,
  ): Promise<{ key: string; result: Awaited<ReturnType<OtpStore['verify']>> }> => {
    const given = rawKey.trim();
    const first = isE164(given)
      ? await guarded(() => store.verify(given, hash(given, code), now(), policy))
      : undefined;
    if (first && first.outcome !== 'invalid') return { key: given, result: first };
    // A key that does not normalise cannot have a record: it is checked as given and simply fails.
    const key = normaliseKey(rawKey)?.value ?? given;
    if (first && key === given) return { key, result: first };
    return { key, result: await guarded(() => store.verify(key, hash(key, code), now(), policy)) };
  };
  const { limits, challenge } = options;
  const metrics = options.metrics;
  // A locale without templates (the request's is one we have; a caller's may not be) reads as the default's.
  const message = (code: string, locale?: string) =>
    renderOtpMessage((locale !== undefined && templates.get(locale)) || defaultTemplates, {
      code,
      ttlSeconds: otp.ttl_seconds,
      appName: config.mail.app_name,
      now: now(),
      webOtpDomain,
    });

  // Built once: the steps of every send share it.
  const env: SendEnv = {
    config,
    otp,
    policy,
    log,
    otpLog,
    now,
    store,
    sms,
    mailer,
    smsPolicy,
    limits,
    challenge,
    metrics,
    sameAccount: options.sameAccount,
    region,
    allowedRegions,
    normaliseKey,
    testIdentifiers,
    hash,
    message,
  };

  const service: OtpService = {
    channels: { sms: sms.configured, email: mailer.configured },
    sms,
    mailer,
    locales: [...templates.keys()],
    message,

    async smsRecipient(phone, field) {
      const receiver = smsReceiver(env, phone, field);
      await guarded(() => limits.sendToIdentifier(receiver));
      return receiver;
    },

    // A code's send, step by step (src/domain/otp/send/): each step fills in the send or refuses it.
    async generate(ctx, request) {
      const send = await admit(env, ctx, request);
      await planRecipients(env, ctx, send);
      await issue(env, send);
      await charge(env, send);
      const delivered = await deliver(env, ctx, send);
      await settle(env, send, delivered);
      return answer(env, send, delivered);
    },

    async verify(ctx, { key: rawKey, code }) {
      await guarded(() => limits.verifyFromIp(ctx.ip));
      const { key, result } = await verifyUnderKey(rawKey, code.trim());
      if (otpLog.isLevelEnabled('info'))
        otpLog.info({ event: 'verify', key: maskOtpKey(key), outcome: result.outcome }, 'verify');
      metrics?.verification(result.outcome);
      if (result.outcome !== 'ok') {
        // Wrong codes from one client are a reason to ask it to prove work before its next send.
        if (challenge) await guarded(() => challenge.verifyFailed(ctx.ip));
        return result;
      }
      const reached = reachedOf(result.to);
      // A record that cannot say where its code went vouches for no one (it is spent all the same).
      if (reached.phone === undefined && reached.email === undefined) return { outcome: 'invalid' };
      // The owner of the addresses is acting, not being bombed: their next code need not wait.
      await guarded(() =>
        Promise.all(
          [reached.phone, reached.email].flatMap((address) =>
            address ? [store.clearRecipient(budgetOf(address))] : [],
          ),
        ),
      );
      return { outcome: 'ok', reached, sentAt: result.sentAt, ...(result.journey ? { journey: result.journey } : {}) };
    },

    async verifyOrThrow(ctx, request) {
      const result = await service.verify(ctx, request);
      if (result.outcome !== 'ok') throw verifyFailure(result.outcome);
      return result.reached;
    },
    spendProof: (id, untilMs) => guarded(() => store.spendProof(id, untilMs)),
    unspendProof: (id) => guarded(() => store.unspendProof(id)),
    markAccountClaimed: (uid) =>
      guarded(() => store.markAccountClaimed(uid, now(), config.security.proof_ttl_seconds * 1000)),
    accountClaimedAt: (uid) => guarded(() => store.accountClaimedAt(uid)),
    holdPhone: (uid, phone) => guarded(() => store.holdPhone(uid, phone, config.security.proof_ttl_seconds * 1000)),
    heldPhoneOf: (uid) => guarded(() => store.heldPhoneOf(uid)),
    phoneHeldFor: (phone) => guarded(() => store.phoneHeldFor(phone)),
    releasePhone: (uid) => guarded(() => store.releasePhone(uid)),

    ready: () => store.ping().catch(() => false),
    close: async () => {
      await store.close();
      await mailer.close();
    },
  };
  return service;
}
