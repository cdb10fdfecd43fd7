import { budgetOf, inboxOf } from '../../core/address';
import { clientNetwork } from '../../core/client-network';
import type { Config } from '../../core/config/schema';
import { apiError } from '../../core/errors';
import type { RateLimiter } from './rate-limiter';

/*
 * The abuse limits the contract leaves open (docs/security.md, docs/abuse.md): code sends per OTP
 * key and per receiving phone or email (a short window and an hourly ceiling), code sends per
 * client IP per hour, verification attempts per client IP per minute, lookups that reveal an
 * account, password logins per IP and per email, registrations per IP, newsletter subscriptions
 * per IP and per email. Counted in the OTP store's own backend, so they hold across a fleet. The client IP
 * comes with each call from the request context: the connection's address, or behind
 * `server.trust_proxy_hops` proxies the entry they appended (src/http/client-address.ts); it is
 * counted on its network (clientNetwork: an IPv6 client's /64, src/core/client-network.ts).
 * Whatever is counted per email is counted on its inbox (inboxOf, src/core/address.ts): every
 * spelling of one inbox (`v+1@x`, `V@x`, Gmail's dots) spends one budget.
 */

export type LimitName =
  | 'sends_per_identifier_per_hour'
  | 'sends_per_recipient'
  | 'sends_per_ip_per_hour'
  | 'verifies_per_ip_per_minute'
  | 'lookups_per_ip_per_minute'
  | 'lookups_per_account_per_hour'
  | 'password_logins_per_ip'
  | 'password_logins_per_email'
  | 'registrations_per_ip_per_hour'
  | 'subscriptions_per_ip_per_hour'
  | 'subscriptions_per_email_per_day'
  | 'wrong_keys_per_ip'
  | 'passkey_logins_per_credential_per_hour';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const DAY = 24 * HOUR;

export interface AbuseLimits {
  /** Counts a send attempt from this client IP; throws `rate_limited` over the limit. */
  sendFromIp(ip: string | undefined): Promise<void>;
  /**
   * Counts a code actually issued for this OTP key or delivered to this phone or email (the
   * short window, then the hourly ceiling), an email on its inbox; throws `rate_limited` over either limit.
   */
  sendToIdentifier(identifier: string): Promise<void>;
  /** Counts a verification attempt from this client IP; throws `rate_limited` over the limit. */
  verifyFromIp(ip: string | undefined): Promise<void>;
  /** Counts an account lookup that reveals existence without a proof (docs/abuse.md). */
  lookupFromIp(ip: string | undefined): Promise<void>;
  /** Counts an answer that tells whether a phone belongs to another account, per client IP and per account acting. */
  phoneCheck(ip: string | undefined, account: string | undefined): Promise<void>;
  /** Counts a password login attempt, per client IP and per email (its inbox). */
  passwordLogin(ip: string | undefined, email: string): Promise<void>;
  /** Counts a login by passkey: a verification from this client IP, and an attempt naming this credential. */
  passkeyLogin(ip: string | undefined, credentialId: string): Promise<void>;
  /** Counts an account registration asked of the provider, per client IP. */
  registration(ip: string | undefined): Promise<void>;
  /** Counts a newsletter subscription, per client IP and per email's inbox (it mails the inbox's owner). */
  subscription(ip: string | undefined, email: string): Promise<void>;
}

export const rateLimited = (retryAfterSeconds: number, limit: LimitName) =>
  apiError('rate_limited', {
    params: { retryAfter: retryAfterSeconds },
    headers: { 'Retry-After': String(retryAfterSeconds) },
    data: { retry_after: retryAfterSeconds, limit },
  });

export function createAbuseLimits(
  config: Config,
  limiter: RateLimiter,
  now: () => number,
  onRefused: (limit: LimitName) => void = () => {},
): AbuseLimits {
  const limits = config.rate_limits;
  const check = async (limit: LimitName, subject: string | undefined, max: number, windowMs: number) => {
    if (!limits.enabled || !subject) return;
    const decision = await limiter.hit(`${limit}:${subject}`, max, windowMs, now());
    if (decision.allowed) return;
    refuse(limit, decision.retryAfterMs);
  };
  const checkClient = (limit: LimitName, ip: string | undefined, max: number, windowMs: number) =>
    check(limit, ip && clientNetwork(ip), max, windowMs);
  const refuse = (limit: LimitName, retryAfterMs: number): never => {
    onRefused(limit);
    throw rateLimited(Math.max(1, Math.ceil(retryAfterMs / 1000)), limit);
  };
  // The short window, then the hourly ceiling: one step on one subject (one map entry, one round trip to Redis), stopping at the first refusal as two checks did.
  const receiverRules = [
    {
      name: 'sends_per_recipient',
      limit: limits.sends_per_recipient,
      windowMs: limits.recipient_window_seconds * 1000,
    },
    { name: 'sends_per_identifier_per_hour', limit: limits.sends_per_identifier_per_hour, windowMs: HOUR },
  ] as const satisfies ReadonlyArray<{ name: LimitName; limit: number; windowMs: number }>;
  return {
    sendFromIp: (ip) => checkClient('sends_per_ip_per_hour', ip, limits.sends_per_ip_per_hour, HOUR),
    async sendToIdentifier(identifier) {
      if (!limits.enabled || !identifier) return;
      const decision = await limiter.hitEach(budgetOf(identifier), receiverRules, now());
      const refused = receiverRules[decision.refused];
      if (refused) refuse(refused.name, decision.retryAfterMs);
    },
    verifyFromIp: (ip) => checkClient('verifies_per_ip_per_minute', ip, limits.verifies_per_ip_per_minute, MINUTE),
    lookupFromIp: (ip) => checkClient('lookups_per_ip_per_minute', ip, limits.lookups_per_ip_per_minute, MINUTE),
    async phoneCheck(ip, account) {
      await checkClient('lookups_per_ip_per_minute', ip, limits.lookups_per_ip_per_minute, MINUTE);
      // The account acting is its uid, else its email: an email is counted on its inbox.
      await check(
        'lookups_per_account_per_hour',
        account && budgetOf(account),
        limits.lookups_per_account_per_hour,
        HOUR,
      );
    },
    async passwordLogin(ip, email) {
      const windowMs = limits.password_login_window_seconds * 1000;
      await checkClient('password_logins_per_ip', ip, limits.password_logins_per_ip, windowMs);
      await check('password_logins_per_email', inboxOf(email.trim()), limits.password_logins_per_email, windowMs);
    },
    async passkeyLogin(ip, credentialId) {
      await checkClient('verifies_per_ip_per_minute', ip, limits.verifies_per_ip_per_minute, MINUTE);
      await check(
        'passkey_logins_per_credential_per_hour',
        credentialId,
        limits.passkey_logins_per_credential_per_hour,
        HOUR,
      );
    },
    registration: (ip) => checkClient('registrations_per_ip_per_hour', ip, limits.registrations_per_ip_per_hour, HOUR),
    async subscription(ip, email) {
      await checkClient('subscriptions_per_ip_per_hour', ip, limits.subscriptions_per_ip_per_hour, HOUR);
      await check('subscriptions_per_email_per_day', inboxOf(email), limits.subscriptions_per_email_per_day, DAY);
    },
  };
}
