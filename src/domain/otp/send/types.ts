import type { OtpSendMetadata } from '../../../../machines/effects';
import type { Config, PhoneChannel } from '../../../core/config/schema';
import type { CallContext } from '../../../core/context';
import type { Mailer } from '../../../clients/mailer';
import type { SmsClient, SmsMessage, SmsSent } from '../../../clients/sms';
import { isApiError } from '../../../core/errors';
import type { Logger } from '../../../core/logger';
import type { Metrics } from '../../../core/metrics';
import type { AbuseLimits } from '../../limits/abuse-limits';
import type { ChallengeGate } from '../../limits/challenge';
import type { OtpHasher } from '../code';
import type { KeyNormaliser } from '../key';
import { maskOtpKey } from '../key';
import type { IssueResult, OtpPolicy, OtpStore } from '../store';
import type { OtpMessage } from '../templates';
import type { TestIdentifiers } from '../test-numbers';
import { storeUnavailable } from '../errors';

/*
 * What the steps of a code's send (admit, plan, issue, deliver, settle) share: the request and
 * answer types, the pieces built once by the service (SendEnv), and the one send's state as the
 * steps fill it in (Send).
 */

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
  channels(
    e164: string,
    region: string,
    requested?: PhoneChannel,
  ): Promise<{ channels: PhoneChannel[]; preferred: PhoneChannel }>;
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

/** The pieces every step of a send is given, built once by the service (never per request). */
export interface SendEnv {
  config: Config;
  otp: Config['otp'];
  policy: OtpPolicy;
  log: Logger;
  otpLog: Logger;
  now: () => number;
  store: OtpStore;
  sms: PhoneSender | SmsClient;
  mailer: Mailer;
  smsPolicy?: SmsSendPolicy;
  limits: AbuseLimits;
  challenge?: ChallengeGate;
  metrics?: Pick<Metrics, 'codeSent'>;
  sameAccount?: (ctx: CallContext, phone: string, email: string) => Promise<boolean>;
  /** The default region a phone without a prefix is read in. */
  region: string;
  /** The regions SMS may go to, upper case (toll fraud, docs/abuse.md). */
  allowedRegions: readonly string[];
  normaliseKey: KeyNormaliser;
  testIdentifiers: TestIdentifiers;
  hash: OtpHasher;
  message(code: string, locale?: string): OtpMessage;
}

/** One send as its steps fill it in: who it is for (admit), who receives it (plan), the code (issue). */
export interface Send {
  request: OtpSendRequest;
  /** The normalised key the code's record lives under. */
  key: string;
  smsTo: string | undefined;
  emailTo: string | undefined;
  useSms: boolean;
  useEmail: boolean;
  /** The confirmed email this phone's code goes to as well, because its last SMS did not arrive. */
  fallback: { email: string; done(): Promise<void> } | undefined;
  /** The addresses as typed: the code goes to, and is recorded as, these. */
  recipients: string[];
  /** The recipients as counted (budgetOf): every spelling of one inbox is one cooldown. */
  budgets: string[];
  /** This send's claim on its recipients' cooldowns. */
  token: string;
  sentAt: number;
  code: string;
  codeHash: string;
  issued: Extract<IssueResult, { status: 'issued' }> | undefined;
  /** Which of the phone's channels to try, in order, and the one it would get had nothing gone wrong. */
  plan: { channels: PhoneChannel[]; preferred: PhoneChannel };
}

/** What each channel did with the code. */
export interface Delivered {
  sms: boolean;
  email: boolean;
  /** The phone's channel that took it (sms, whatsapp). */
  phoneChannel: PhoneChannel | undefined;
}

/** Store failures (a Redis outage later) become a clean `store_unavailable`, never a 500. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw isApiError(err) ? err : storeUnavailable(err);
  }
}

/** The send's one OTP log line; built only when the OTP log takes it: masking costs, and most runs log at warn. */
export function logGenerate(env: SendEnv, send: Send, fields: Record<string, unknown>): void {
  if (!env.otpLog.isLevelEnabled('info')) return;
  env.otpLog.info(
    {
      event: 'generate',
      key: maskOtpKey(send.key),
      chosen: { sms: send.smsTo !== undefined, email: send.emailTo !== undefined },
      ...fields,
    },
    'generate',
  );
}
