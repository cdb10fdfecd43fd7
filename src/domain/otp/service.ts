import type { OtpSendMetadata } from '../../../machines/effects';
import type { Config, PhoneChannel } from '../../core/config/schema';
import type { CallContext } from '../../core/context';
import type { Mailer } from '../../clients/mailer';
import type { SmsClient, SmsMessage, SmsSent } from '../../clients/sms';
import { isApiError } from '../../core/errors';
import { maskEmail, maskPhone, type Logger } from '../../core/logger';
import { budgetOf } from '../../core/address';
import { isE164, smsFacts, toE164 } from '../phone';
import { randomId } from '../../core/random-id';
import { createOtpHasher, generateCode } from './code';
import { alreadySent, channelNotConfigured, deliveryFailed, invalidField, phoneNotMobile, regionNotAllowed, storeUnavailable, verifyFailure } from './errors';
import { createKeyNormaliser, maskOtpKey } from './key';
import type { OtpPolicy, OtpStore, VerifyOutcome } from './store';
import { addressesOf, reachedOf, type Reached } from './reached';
import type { AbuseLimits } from '../limits/abuse-limits';
import type { ChallengeGate } from '../limits/challenge';
import type { Metrics } from '../../core/metrics';
import { loadLocalizedTemplates, renderOtpMessage, type LocalizedTemplates, type OtpMessage } from './templates';
import { fixedCodeOf, loadTestIdentifiers } from './test-numbers';

/*
 * Generate, send and verify one-time codes. Action handlers (otp_generate, verify_otp,
 * otp_verify_local) and the login flows (FeLogin, FeVerifyOtp) all go through this service, so
 * the channel rules, the cooldown and the security floor live in one place.
 */

/** What the service is built from (the dependency container passes its own pieces). */
export interface OtpServiceEnv {
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

/**
 * What the SMS side (src/domain/sms) decides about a code's SMS: the pumping defence's
 * admission, the email fallback of a phone whose last SMS did not arrive, the ledger's
 * record of mails, and the count of refusals.
 */
export interface SmsSendPolicy {
  /** Before a code SMS to `e164` (in `region`); throws `sms_destination_blocked` or `sms_destination_limited`. */
  admit(e164: string, region: string): Promise<void>;
  /** The confirmed email to send this phone's code to as well, once, because its last SMS did not arrive; `done` records the fallback made. */
  fallbackEmail(ctx: CallContext, phone: string): Promise<{ email: string; done(): Promise<void> } | undefined>;
  /** A code mail was accepted (the ledger). */
  emailSent(email: string): Promise<void>;
  /** A code SMS refused before any provider was asked (counted per reason and country). */
  refused(reason: 'region_not_allowed' | 'phone_not_mobile', region: string): void;
  /** Throws `invalid_request` naming `field` when the caller may not choose `requested` for a phone of `region`. */
  checkChannel(region: string, requested: PhoneChannel | undefined, field: string): void;
  /** The channels this phone's code is tried on, in order, and the one it would get had nothing gone wrong. */
  channels(e164: string, region: string, requested?: PhoneChannel): Promise<{ channels: PhoneChannel[]; preferred: PhoneChannel }>;
}

/** What the service hands the phone's channel: a message, with the channels to try it on in order. */
export interface PhoneSender {
  readonly configured: boolean;
  send(ctx: CallContext, message: SmsMessage & { channels?: readonly PhoneChannel[] }): Promise<SmsSent>;
}

export interface OtpSendRequest {
  /** The OTP key as the caller gave it (phone, email or another identifier). */
  key: string;
  /** Where to send an SMS, in any form; an unparseable phone is `invalid_request`. */
  phone?: string;
  /** Where to send a mail. */
  email?: string;
  /** The phone's channel the caller asks for (`sms.channel_choice`); absent: the region's `sms.channels`. */
  channel?: PhoneChannel;
  /** Request field names to name in `invalid_request` issues (defaults: uid, phone, notify_email, channel). */
  fields?: { key?: string; phone?: string; email?: string; channel?: string };
  /**
   * The funnel's anonymous journey id to store with the code (a login flow's); `kept` hears the
   * id the record keeps: a resend within the code's lifetime keeps the first code's.
   */
  journey?: { id: string; kept(id: string): void };
}

/** otp_generate's success data (docs/contract.md#one-time-codes), also the `otp` send metadata of the login flows: one type, the machines'. */
export type OtpSendResult = OtpSendMetadata & { fallback?: 'email' | PhoneChannel };

export interface OtpVerifyRequest {
  key: string;
  code: string;
}

/** One verification; `reached` (with `ok`) is what knowing the code proves: the addresses it went to. */
/** `sentAt`: when the accepted code was issued (epoch ms), so a flow can time the screen that waited for it. */
/** `journey`: the funnel's anonymous journey id the code's record carried, whatever the outcome. */
export type Verification = { outcome: 'ok'; reached: Reached; sentAt: number; journey?: string } | { outcome: Exclude<VerifyOutcome, 'ok'>; journey?: string };

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

/** Store failures (a Redis outage later) become a clean `store_unavailable`, never a 500. */
async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw isApiError(err) ? err : storeUnavailable(err);
  }
}

export function createOtpService(config: Config, options: OtpServiceOptions): OtpService {
  const { log, otpLog, now, secret } = options;
  const otp = config.otp;
  const policy: OtpPolicy = { ttlMs: otp.ttl_seconds * 1000, cooldownMs: otp.resend_cooldown_seconds * 1000, maxAttempts: otp.max_attempts };
  const region = config.sms.default_region;
  // Toll-fraud guard: SMS only to these regions; by default only the default region (docs/abuse.md).
  const allowedRegions = (config.sms.allowed_regions.length > 0 ? config.sms.allowed_regions : [region]).map((r) => r.toUpperCase());
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
  const verifyUnderKey = async (rawKey: string, code: string): Promise<{ key: string; result: Awaited<ReturnType<OtpStore['verify']>> }> => {
    const given = rawKey.trim();
    const first = isE164(given) ? await guarded(() => store.verify(given, hash(given, code), now(), policy)) : undefined;
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
    renderOtpMessage((locale !== undefined && templates.get(locale)) || defaultTemplates, { code, ttlSeconds: otp.ttl_seconds, appName: config.mail.app_name, now: now(), webOtpDomain });

  /** The E.164 a phone is texted at: a valid mobile number of an allowed region (toll fraud, docs/abuse.md). */
  function smsReceiver(phone: string, field: string, normalised = false): string {
    const e164 = normalised ? phone : toE164(phone, region);
    if (!e164) throw invalidField(field, 'not a valid phone number');
    const { region: smsRegion, mobile } = smsFacts(e164);
    if (!allowedRegions.includes(smsRegion ?? '')) {
      smsPolicy?.refused('region_not_allowed', smsRegion ?? '');
      throw regionNotAllowed(field);
    }
    if (!mobile) {
      smsPolicy?.refused('phone_not_mobile', smsRegion ?? '');
      throw phoneNotMobile(field);
    }
    return e164;
  }

  /**
   * Where this request's code goes: otp_generate's rules 1 and 2 (docs/otp.md), SMS
   * only to mobile numbers of the allowed regions, and a phone and an email together only when
   * they are one account's (docs/security.md): a code to both proves control of either.
   */
  function targets(request: OtpSendRequest) {
    const fields = { key: 'uid', phone: 'phone', email: 'notify_email', ...request.fields };
    const key = normaliseKey(request.key);
    if (!key || key.value === '') throw invalidField(fields.key, key ? 'must not be empty' : 'not a valid phone number');
    const smsTo = request.phone !== undefined ? smsReceiver(request.phone, fields.phone) : key.kind === 'phone' ? smsReceiver(key.value, fields.key, true) : undefined;
    const emailTo = request.email?.trim().toLowerCase() || (key.kind === 'email' && !smsTo ? key.value : undefined);
    if (!smsTo && !emailTo) throw invalidField(fields.phone, 'give a phone or an email to send the code to');
    if (request.channel !== undefined) {
      const field = request.fields?.channel ?? 'channel';
      if (!smsTo) throw invalidField(field, 'a channel is for a phone; this code goes by mail');
      if (smsPolicy) smsPolicy.checkChannel(smsFacts(smsTo).region ?? '', request.channel, field);
      else if (request.channel !== 'sms') throw invalidField(field, `not offered for this number: sms`);
    }
    return { key: key.value, smsTo, emailTo };
  }

  async function sharesAccount(ctx: CallContext, phone: string, email: string): Promise<boolean> {
    if (!options.sameAccount) return false;
    try {
      return await options.sameAccount(ctx, phone, email);
    } catch (err) {
      // The SMS still goes: an identity outage costs the second channel, never the code.
      log.warn({ err: isApiError(err) ? err.reason : 'error' }, 'otp: could not check that phone and email are one account');
      return false;
    }
  }

  /**
   * Each receiving phone's and inbox's own cooldown, whatever the key: all or none are claimed.
   * `budgets` are the recipients as counted (budgetOf): every spelling of one inbox is one cooldown.
   */
  async function claimRecipients(budgets: string[], token: string): Promise<void> {
    const claimed: string[] = [];
    for (const budget of budgets) {
      const claim = await guarded(() => store.claimRecipient(budget, token, policy.cooldownMs));
      if (!claim.claimed) {
        await releaseRecipients(claimed, token);
        throw alreadySent(Math.max(1, Math.ceil(claim.retryAfterMs / 1000)), otp.resend_cooldown_seconds);
      }
      claimed.push(budget);
    }
  }
  const releaseRecipients = (budgets: string[], token: string) => guarded(() => Promise.all(budgets.map((budget) => store.releaseRecipient(budget, token))));

  async function deliver(channel: 'sms' | 'email', to: string, send: () => Promise<unknown>): Promise<boolean> {
    const masked = () => (channel === 'sms' ? maskPhone(to) : maskEmail(to));
    // The phone's channel is the router's answer (sms or whatsapp); the mail's is the mail.
    const used = (sent: unknown) => (sent as Partial<SmsSent> | undefined)?.channel ?? channel;
    // A test identifier (otp.test_numbers) receives nothing; the answer still reads as a delivery, so the wire does not tell it apart.
    if (testIdentifiers.size > 0 && testIdentifiers.has(to)) {
      if (otpLog.isLevelEnabled('info')) otpLog.info({ event: 'send', channel, to: masked(), outcome: 'test_identifier' }, 'send');
      return true;
    }
    try {
      const sent = await send();
      if (otpLog.isLevelEnabled('info')) otpLog.info({ event: 'send', channel: used(sent), to: masked(), outcome: 'sent' }, 'send');
      metrics?.codeSent(used(sent), 'sent');
      return true;
    } catch (err) {
      const reason = isApiError(err) ? err.reason : 'error';
      metrics?.codeSent(channel, 'failed');
      otpLog.warn({ event: 'send', channel, to: masked(), outcome: 'failed', reason }, 'send');
      return false;
    }
  }

  const service: OtpService = {
    channels: { sms: sms.configured, email: mailer.configured },
    sms,
    mailer,
    locales: [...templates.keys()],
    message,

    async smsRecipient(phone, field) {
      const receiver = smsReceiver(phone, field);
      await guarded(() => limits.sendToIdentifier(receiver));
      return receiver;
    },

    async generate(ctx, request) {
      const { key, smsTo, emailTo: requestedEmail } = targets(request);
      let emailTo = requestedEmail;
      const useSms = smsTo !== undefined && sms.configured;
      let useEmail = emailTo !== undefined && mailer.configured;
      // The line is built only when the OTP log takes it: masking costs, and most runs log at warn.
      const logGenerate = (fields: Record<string, unknown>) => {
        if (!otpLog.isLevelEnabled('info')) return;
        otpLog.info({ event: 'generate', key: maskOtpKey(key), chosen: { sms: smsTo !== undefined, email: emailTo !== undefined }, ...fields }, 'generate');
      };
      if (!useSms && !useEmail) {
        logGenerate({ outcome: 'channel_not_configured' });
        throw channelNotConfigured();
      }

      // Before anything is counted or sent: a bot that cannot solve it costs nothing but this check.
      const action = ctx.action;
      if (challenge && action !== undefined) await guarded(() => challenge.check(ctx, { action, identifier: key, ...(useSms ? { phone: smsTo } : {}) }));
      await guarded(() => limits.sendFromIp(ctx.ip));
      // The last SMS to this phone did not arrive: this code goes to the account's confirmed email too, as rule 2 pairs them (docs/sms.md).
      const fallback = useSms && !useEmail && mailer.configured && smsPolicy ? await smsPolicy.fallbackEmail(ctx, smsTo) : undefined;
      if (fallback) {
        emailTo = fallback.email;
        useEmail = true;
      }
      // A code to a phone and an email proves control of either: both only when they are one account's.
      // Asked after the per-IP cap, so a flood cannot make the service ask the provider without limit.
      if (useSms && useEmail && !fallback && !(await sharesAccount(ctx, smsTo, emailTo!))) {
        log.warn({ key: maskOtpKey(key), phone: maskPhone(smsTo), email: maskEmail(emailTo!) }, 'otp: phone and email are not one account, code sent by SMS only');
        useEmail = false;
      }
      const recipients = [...(useSms ? [smsTo] : []), ...(useEmail ? [emailTo!] : [])];
      // The code goes to, and is recorded as, the addresses typed; it is counted on their inboxes.
      const budgets = recipients.map(budgetOf);
      const token = randomId(9);
      // Sends are charged to who receives them: six keys and one phone, or six spellings of one inbox, send one code per cooldown.
      try {
        await claimRecipients(budgets, token);
      } catch (err) {
        if (isApiError(err) && err.reason === 'already_sent') {
          logGenerate({ outcome: 'blocked', recipient: true });
          // An early resend is the journey of the code already sent: its refusal is counted there (on 14, not on the first screen).
          const journey = request.journey ? await guarded(() => store.journeyOf(key, now())).catch(() => undefined) : undefined;
          if (journey) request.journey!.kept(journey);
        }
        throw err;
      }
      const sentAt = now();
      const code = (testIdentifiers.size > 0 ? fixedCodeOf(testIdentifiers, key, recipients) : undefined) ?? generateCode(otp.length);
      const codeHash = hash(key, code);
      const issued = await guarded(() => store.issue(key, codeHash, sentAt, policy, addressesOf(recipients), request.journey?.id));
      if (issued.status === 'blocked') {
        // An early resend is the journey of the code already sent: its refusal is counted there (on 14, not on the first screen).
        if (request.journey && issued.journey) request.journey.kept(issued.journey);
        await releaseRecipients(budgets, token);
        const retryAfter = Math.max(1, Math.ceil(issued.retryAfterMs / 1000));
        logGenerate({ outcome: 'blocked', retry_after: retryAfter });
        throw alreadySent(retryAfter, otp.resend_cooldown_seconds);
      }
      // The same code, one message, on whichever of the phone's channels takes it first.
      let plan: { channels: PhoneChannel[]; preferred: PhoneChannel } = { channels: ['sms'], preferred: 'sms' };
      // Counted only for codes really issued: requests refused by a cooldown cost the key and its recipients nothing.
      try {
        for (const subject of new Set([budgetOf(key), ...budgets])) await guarded(() => limits.sendToIdentifier(subject));
        // Which of the phone's channels (sms, whatsapp) to try, in order: read here, so a store that cannot answer takes the code back.
        if (useSms && smsPolicy) plan = await guarded(() => smsPolicy.channels(smsTo, smsFacts(smsTo).region ?? '', request.channel));
        // The pumping defence counts codes really issued too, whatever their channel, and refuses before any provider is paid.
        if (useSms && smsPolicy) await guarded(() => smsPolicy.admit(smsTo, smsFacts(smsTo).region ?? ''));
      } catch (err) {
        await guarded(() => store.revert(key, codeHash, issued.previous));
        await releaseRecipients(budgets, token);
        logGenerate({ outcome: isApiError(err) ? err.reason : 'rate_limited' });
        throw err;
      }
      if (request.journey && issued.record.journey) request.journey.kept(issued.record.journey);
      const debugCode = otp.debug ? { debug_code: code } : {};
      logGenerate({ outcome: 'issued', ...debugCode });

      const text = message(code, ctx.locale);
      let phoneChannel: PhoneChannel | undefined;
      const sendToPhone = async () => {
        const sent = await sms.send(ctx, { to: smsTo!, body: text.sms, code, locale: ctx.locale ?? config.mail.default_locale, channels: plan.channels });
        phoneChannel = sent.channel ?? 'sms';
        return sent;
      };
      const [smsSent, emailSent] = await Promise.all([
        useSms ? deliver('sms', smsTo, sendToPhone) : false,
        useEmail ? deliver('email', emailTo!, () => mailer.send(ctx, { to: emailTo!, subject: text.subject, html: text.html, text: text.text })) : false,
      ]);
      // A test identifier receives nothing: it reads as a send on the phone's first channel, as a real one would.
      if (smsSent && !phoneChannel) phoneChannel = plan.channels[0];
      if (!smsSent && !emailSent) {
        // Nobody received this code: put the previous record back, so no cooldown is charged.
        await guarded(() => store.revert(key, codeHash, issued.previous));
        await releaseRecipients(budgets, token);
        log.warn({ key: maskOtpKey(key), channels: { sms: useSms, email: useEmail } }, 'otp delivery failed on every channel');
        throw deliveryFailed();
      }
      // A channel that failed charges its address no cooldown. The record still names both
      // addresses: they are one account's (targets), so the code vouches for that account either way.
      if (useSms && !smsSent) await releaseRecipients([budgetOf(smsTo)], token);
      if (useEmail && !emailSent) await releaseRecipients([budgetOf(emailTo!)], token);
      if (emailSent && smsPolicy) {
        // The record of what was sent: losing it costs the operator's view, never the answer.
        await smsPolicy.emailSent(emailTo!).catch((err: unknown) => log.warn({ err: isApiError(err) ? err.reason : 'error' }, 'sms ledger: could not record a code mail'));
        if (fallback) await fallback.done().catch(() => {});
      }
      return {
        ...(otp.debug ? { otp: code } : {}),
        resent: issued.previous !== null && issued.previous.expiresAt > sentAt,
        retry_after: otp.resend_cooldown_seconds,
        cooldown: otp.resend_cooldown_seconds,
        expires_in: otp.ttl_seconds,
        notified: { email: emailSent, sms: smsSent, ...(smsSent && phoneChannel ? { channel: phoneChannel } : {}) },
        // The answer says the code also went by mail because the last SMS did not arrive,
        // or went by another channel than the phone's first (WhatsApp refused it, or its last message was not read).
        ...(fallback && emailSent ? { fallback: 'email' as const } : phoneChannel && phoneChannel !== plan.preferred ? { fallback: phoneChannel } : {}),
      };
    },

    async verify(ctx, { key: rawKey, code }) {
      await guarded(() => limits.verifyFromIp(ctx.ip));
      const { key, result } = await verifyUnderKey(rawKey, code.trim());
      if (otpLog.isLevelEnabled('info')) otpLog.info({ event: 'verify', key: maskOtpKey(key), outcome: result.outcome }, 'verify');
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
      await guarded(() => Promise.all([reached.phone, reached.email].flatMap((address) => (address ? [store.clearRecipient(budgetOf(address))] : []))));
      return { outcome: 'ok', reached, sentAt: result.sentAt, ...(result.journey ? { journey: result.journey } : {}) };
    },

    async verifyOrThrow(ctx, request) {
      const result = await service.verify(ctx, request);
      if (result.outcome !== 'ok') throw verifyFailure(result.outcome);
      return result.reached;
    },
    spendProof: (id, untilMs) => guarded(() => store.spendProof(id, untilMs)),
    unspendProof: (id) => guarded(() => store.unspendProof(id)),
    markAccountClaimed: (uid) => guarded(() => store.markAccountClaimed(uid, now(), config.security.proof_ttl_seconds * 1000)),
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
