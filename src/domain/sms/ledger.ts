import { createHmac } from 'node:crypto';
import { randomId } from '../../core/random-id';
import type { Config, PhoneChannel } from '../../core/config/schema';
import { LOGIN_METHODS, type ChallengeDecision, type LoginMethod, type Metrics } from '../../core/metrics';
import { maskEmail, maskPhone } from '../../core/logger';
import type { SmsReceipt } from '../../clients/sms';
import { NOT_SENT_REASONS, type LedgerEntry, type LedgerUpdate, type NotSentReason, type SmsStore } from './store';

/*
 * The message ledger (docs/sms.md): one entry per code sent, with where it went (masked), by
 * whom, whether it arrived and whether its code was then verified. It is what the operator's
 * view, `npm run ledger` and the email fallback read. Recipients are found again only by a
 * keyed digest, so the store never holds a plain phone or email.
 */

/**
 * Where a message is, one of five, so a group's counts add up to what it sent:
 * `waiting` for a receipt that is not late yet; `delivered` or `failed` by a receipt; `unknown`
 * when the receipt asked for is later than `sms.receipts.timeout_seconds`; `no_receipt` when
 * none was asked for (a provider that posts none, no `sms.receipts.callback_base_url`, an email).
 */
export type DeliveryState = 'waiting' | 'delivered' | 'failed' | 'unknown' | 'no_receipt';

interface SmsAccepted {
  id: string;
  e164: string;
  country: string;
  numberType: string;
  range: string;
  provider: string;
  /** The phone's channel it went by (absent: sms). */
  channel?: PhoneChannel;
  messageId?: string;
  /** The provider was asked for a delivery receipt (it posts them, and a callback URL was given). */
  receiptAsked: boolean;
}

/** A message no provider took: its phone, and the last provider asked and why it failed. */
interface SmsNotSent {
  e164: string;
  country: string;
  numberType: string;
  range: string;
  /** The last provider asked (or skipped, its circuit open); empty when none serves the country. */
  provider: string;
  channel: PhoneChannel;
  reason: NotSentReason;
}

/** Conversion of one group (a country and a provider). */
export interface LedgerGroup {
  country: string;
  provider: string;
  channel: LedgerEntry['channel'];
  /** sent + not_sent: every message tried. */
  attempted: number;
  /** Messages no provider took (SmsNotSent), counted under the last provider asked. */
  not_sent: number;
  /** delivered + failed + waiting + no_receipt + unknown. */
  sent: number;
  delivered: number;
  failed: number;
  waiting: number;
  no_receipt: number;
  unknown: number;
  verified: number;
  /** verified / sent, 0 to 1. */
  conversion: number;
}

export interface Ledger {
  newId(): string;
  recordSms(sent: SmsAccepted): Promise<void>;
  recordEmail(email: string): Promise<void>;
  /** A message every provider refused or could not take: counted beside those sent, never anyone's latest. */
  recordNotSent(failed: SmsNotSent): Promise<void>;
  /** The messages not sent among `entries`, per provider, channel and reason, most first. */
  notSent(
    entries: LedgerEntry[],
  ): Array<{ provider: string; channel: LedgerEntry['channel']; reason: NotSentReason; count: number }>;
  /** A provider's receipt for entry `id`: recorded when that provider sent that message; the entry, or null. */
  receipt(id: string, provider: string, receipt: SmsReceipt): Promise<LedgerEntry | null>;
  /** The entry of a provider's message id (a webhook names only that), or null. */
  entryOfMessage(provider: string, messageId: string): Promise<string | null>;
  /** The code sent to this phone or email was verified: its newest entry converts. */
  verified(address: string): Promise<LedgerEntry | null>;
  /** The newest entry of a phone or email. */
  latest(address: string): Promise<LedgerEntry | null>;
  markFallback(id: string): Promise<void>;
  /** See DeliveryState. */
  stateOf(entry: LedgerEntry): DeliveryState;
  since(sinceMs: number, limit?: number): Promise<LedgerEntry[]>;
  /** One bot challenge decision, counted per hour for the ledger's report. */
  recordChallenge(decision: ChallengeDecision): Promise<void>;
  /** Bot challenges asked, solved and failed in the hours from `sinceMs`'s to now's (whole hours). */
  challenges(sinceMs: number): Promise<Record<ChallengeDecision, number>>;
  /** One login that reached 90, by its method: a passkey login is an SMS saved. */
  recordLogin(method: LoginMethod): Promise<void>;
  /** Logins by method in the hours from `sinceMs`'s to now's (whole hours). */
  logins(sinceMs: number): Promise<Record<LoginMethod, number>>;
  /** Conversion per channel, country and provider; `by: 'channel'`: per channel and country, every provider together (provider empty). */
  summary(entries: LedgerEntry[], by?: 'provider' | 'channel'): LedgerGroup[];
}

const DEFAULT_LIMIT = 10_000;
const HOUR = 3_600_000;
const CHALLENGE_DECISIONS = ['challenged', 'solved', 'failed'] as const satisfies readonly ChallengeDecision[];

export function createLedger(
  config: Config,
  store: SmsStore,
  options: { now: () => number; secret: string; metrics?: Pick<Metrics, 'smsReceipt' | 'smsVerified'> },
): Ledger {
  const { now, metrics } = options;
  const retentionMs = config.sms.ledger.retention_seconds * 1000;
  const receiptTimeoutMs = config.sms.receipts.timeout_seconds * 1000;
  // Long enough for a receipt to find its phone's entry and for the next code to ask for a fallback.
  const latestTtlMs = Math.max(retentionMs, 1000);
  // A provider's message id is not personal, but it is the provider's: keyed apart from the addresses' digests.
  const messageKey = (provider: string, messageId: string) => `message:${provider}:${messageId.slice(0, 128)}`;
  const digest = (address: string) =>
    createHmac('sha256', options.secret).update(`sms-ledger:${address}`).digest('base64url').slice(0, 27);

  const stateOf = (entry: LedgerEntry): DeliveryState => {
    if (entry.delivered_at !== undefined) return 'delivered';
    if (entry.failed_at !== undefined) return 'failed';
    if (entry.receipt_due_at === undefined) return 'no_receipt';
    return now() >= entry.receipt_due_at ? 'unknown' : 'waiting';
  };

  const challengeKey = (decision: ChallengeDecision, hour: number) => `chal:${decision}:${hour}`;
  const loginKey = (method: LoginMethod, hour: number) => `login:${method}:${hour}`;
  /** A counter kept per hour (`keyOf` names each hour's), counted once now. */
  const countThisHour = async (keyOf: (hour: number) => string) => {
    const at = now();
    await store.increment(keyOf(Math.floor(at / HOUR)), retentionMs, at);
  };
  /** The sum of an hourly counter over the hours from `sinceMs`'s to now's, within the retention. */
  const hourlyTotal = async (keyOf: (hour: number) => string, sinceMs: number) => {
    const at = now();
    const hours: number[] = [];
    for (let hour = Math.floor(Math.max(sinceMs, at - retentionMs) / HOUR); hour <= Math.floor(at / HOUR); hour++)
      hours.push(hour);
    return (await Promise.all(hours.map((hour) => store.count(keyOf(hour), at)))).reduce((a, b) => a + b, 0);
  };

  const ledger: Ledger = {
    recordChallenge: (decision) => countThisHour((hour) => challengeKey(decision, hour)),
    async challenges(sinceMs) {
      const [challenged, solved, failed] = await Promise.all(
        CHALLENGE_DECISIONS.map((decision) => hourlyTotal((hour) => challengeKey(decision, hour), sinceMs)),
      );
      return { challenged: challenged!, solved: solved!, failed: failed! };
    },
    recordLogin: (method) => countThisHour((hour) => loginKey(method, hour)),
    async logins(sinceMs) {
      const [code, passkey] = await Promise.all(
        LOGIN_METHODS.map((method) => hourlyTotal((hour) => loginKey(method, hour), sinceMs)),
      );
      return { code: code!, passkey: passkey! };
    },
    newId: () => randomId(12),
    async recordSms(sent) {
      const at = now();
      const entry: LedgerEntry = {
        id: sent.id,
        channel: sent.channel ?? 'sms',
        recipient: maskPhone(sent.e164),
        country: sent.country,
        number_type: sent.numberType,
        range: sent.range,
        provider: sent.provider,
        ...(sent.messageId ? { message_id: sent.messageId } : {}),
        accepted_at: at,
        ...(sent.receiptAsked ? { receipt_due_at: at + receiptTimeoutMs } : {}),
      };
      await store.addEntry(entry, retentionMs, at);
      await store.setLatest(digest(sent.e164), sent.id, latestTtlMs);
      if (sent.messageId) await store.setLatest(messageKey(sent.provider, sent.messageId), sent.id, latestTtlMs);
    },
    async recordNotSent(failed) {
      const at = now();
      // No latest for its phone: the fallback and the channel planner read what reached the phone, and this did not.
      await store.addEntry(
        {
          id: ledger.newId(),
          channel: failed.channel,
          recipient: maskPhone(failed.e164),
          country: failed.country,
          number_type: failed.numberType,
          range: failed.range,
          provider: failed.provider,
          accepted_at: at,
          not_sent: failed.reason,
        },
        retentionMs,
        at,
      );
    },
    notSent(entries) {
      const counts = new Map<
        string,
        { provider: string; channel: LedgerEntry['channel']; reason: NotSentReason; count: number }
      >();
      for (const entry of entries) {
        // A reason read back from the store is one of the known words, or it is not shown as one.
        if (entry.not_sent === undefined || !(NOT_SENT_REASONS as readonly string[]).includes(entry.not_sent)) continue;
        const key = `${entry.provider}|${entry.channel}|${entry.not_sent}`;
        const row = counts.get(key) ?? {
          provider: entry.provider,
          channel: entry.channel,
          reason: entry.not_sent,
          count: 0,
        };
        row.count += 1;
        counts.set(key, row);
      }
      return [...counts.values()].sort((a, b) => b.count - a.count || a.provider.localeCompare(b.provider));
    },
    async recordEmail(email) {
      const at = now();
      const id = ledger.newId();
      await store.addEntry(
        {
          id,
          channel: 'email',
          recipient: maskEmail(email),
          country: '',
          number_type: '',
          range: '',
          provider: 'mail',
          accepted_at: at,
        },
        retentionMs,
        at,
      );
      await store.setLatest(digest(email), id, latestTtlMs);
    },
    async receipt(id, provider, receipt) {
      const entry = await store.entry(id);
      // A genuine receipt names its own message: one signed for another message or provider records nothing here.
      if (
        !entry ||
        entry.provider !== provider ||
        (entry.message_id !== undefined && entry.message_id !== receipt.messageId)
      )
        return null;
      if (receipt.status === 'pending') return entry;
      const channel = entry.channel === 'email' ? undefined : entry.channel;
      if (receipt.status === 'unknown') {
        metrics?.smsReceipt(provider, entry.country, receipt.status, channel);
        return entry;
      }
      const at = now();
      // Each status is recorded once, by its field: a replayed receipt (providers retry, and a
      // holder of the signing secret can replay) changes no time, no error code and no count.
      const [field, update]: [keyof LedgerUpdate, LedgerUpdate] =
        receipt.status === 'read'
          ? ['read_at', { read_at: at, delivered_at: at }]
          : receipt.status === 'delivered'
            ? ['delivered_at', { delivered_at: at }]
            : [
                'failed_at',
                { failed_at: at, ...(receipt.errorCode ? { error_code: receipt.errorCode.slice(0, 16) } : {}) },
              ];
      const recorded = await store.recordOnce(id, field, update);
      if (recorded?.changed) metrics?.smsReceipt(provider, entry.country, receipt.status, channel);
      return recorded ? recorded.entry : null;
    },
    async verified(address) {
      const id = await store.latest(digest(address));
      if (!id) return null;
      // Once, atomically: two instances told of the same verification convert the entry once.
      const recorded = await store.recordOnce(id, 'verified_at', { verified_at: now() });
      if (recorded?.changed && recorded.entry.channel !== 'email')
        metrics?.smsVerified(recorded.entry.provider, recorded.entry.country, recorded.entry.channel);
      return recorded ? recorded.entry : null;
    },
    entryOfMessage: (provider, messageId) => store.latest(messageKey(provider, messageId)),
    async latest(address) {
      const id = await store.latest(digest(address));
      return id ? store.entry(id) : null;
    },
    async markFallback(id) {
      await store.updateEntry(id, { fallback_at: now() });
    },
    stateOf,
    since: (sinceMs, limit = DEFAULT_LIMIT) => store.entriesSince(sinceMs, limit),
    summary(entries, by = 'provider') {
      const groups = new Map<string, LedgerGroup>();
      for (const entry of entries) {
        const provider = by === 'provider' ? entry.provider : '';
        const key = `${entry.channel}|${entry.country}|${provider}`;
        let group = groups.get(key);
        if (!group) {
          group = {
            country: entry.country,
            provider,
            channel: entry.channel,
            attempted: 0,
            not_sent: 0,
            sent: 0,
            delivered: 0,
            failed: 0,
            waiting: 0,
            no_receipt: 0,
            unknown: 0,
            verified: 0,
            conversion: 0,
          };
          groups.set(key, group);
        }
        group.attempted += 1;
        if (entry.not_sent !== undefined) {
          group.not_sent += 1;
          continue;
        }
        group.sent += 1;
        group[stateOf(entry)] += 1;
        if (entry.verified_at !== undefined) group.verified += 1;
      }
      return [...groups.values()]
        .map((group) => ({
          ...group,
          conversion: group.sent === 0 ? 0 : Math.round((group.verified / group.sent) * 1000) / 1000,
        }))
        .sort((a, b) => b.attempted - a.attempted);
    },
  };
  return ledger;
}
