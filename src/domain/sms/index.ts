import type { Config } from '../../core/config/schema';
import type { CallContext } from '../../core/context';
import { isApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Metrics } from '../../core/metrics';
import type { RedisConnection } from '../../core/redis';
import type { ClientOptions } from '../../clients/http';
import type { ReceiptRequest, SmsProvider } from '../../clients/sms';
import { createChannelPlanner, type ChannelPlanner } from './channels';
import { createLedger, type Ledger } from './ledger';
import type { VerifiedHistory } from '../limits/verified-history';
import { createPumpingDefence, type PumpingDefence } from './pumping';
import { createSmsRouter, type SmsRouter } from './router';
import { createMemorySmsStore, createRedisSmsStore, type LedgerEntry, type SmsStore } from './store';

/*
 * The SMS side of the service (docs/sms.md): a phone's channels (channels.ts: sms, whatsapp), the providers behind them (router.ts), the
 * message ledger (ledger.ts), delivery receipts, the email fallback, and the pumping defence
 * (pumping.ts), built once over the store the codes use.
 */

export interface SmsServices {
  router: SmsRouter;
  ledger: Ledger;
  pumping: PumpingDefence;
  /** Which channels (sms, whatsapp) a phone's code is tried on (channels.ts). */
  channels: ChannelPlanner;
  /**
   * A provider's callback: `unknown_provider` for a name no provider has, `refused` when it is
   * not authentic (the provider's signature does not hold), else recorded (or ignored when it
   * names no message of ours).
   */
  receipt(
    providerName: string,
    entryId: string | undefined,
    request: ReceiptRequest,
  ): Promise<'recorded' | 'ignored' | 'refused' | 'unknown_provider'>;
  /** A provider's webhook handshake (Meta's GET): the challenge to echo, `refused`, or `unknown_provider` for a name with no webhook. */
  handshake(providerName: string, query: URLSearchParams): string | 'refused' | 'unknown_provider';
  /**
   * The confirmed email of the account holding `phone`, when the last code SMS to it failed to
   * deliver or had no receipt in time and no fallback was made for it yet (once per SMS).
   */
  fallbackEmail(ctx: CallContext, phone: string): Promise<{ email: string; done(): Promise<void> } | undefined>;
  /** A code was verified at these addresses: the ledger converts, and so does the phone's range. */
  /** A code sent at `sentAt` (when it was issued, before its pumping admission) was verified where it reached. */
  verified(reached: { phone?: string; email?: string }, sentAt: number): Promise<void>;
}

export interface SmsServicesOptions {
  log: Logger;
  now: () => number;
  secret: string;
  /** Who verified a code lately (src/domain/limits/verified-history.ts): the pumping caps and blocks spare them. */
  history: Pick<VerifiedHistory, 'has'>;
  metrics?: Metrics;
  redis?: RedisConnection;
  store?: SmsStore;
  providers?: SmsProvider[];
  random?: () => number;
  clients?: ClientOptions;
  /** The confirmed email of the one account holding this phone (the identity provider), or undefined. */
  confirmedEmailOf?: (ctx: CallContext, phone: string) => Promise<string | undefined>;
}

export function createSmsServices(config: Config, options: SmsServicesOptions): SmsServices {
  const { log, now, metrics } = options;
  const store =
    options.store ??
    (options.redis
      ? createRedisSmsStore(options.redis, config.redis.key_prefix)
      : createMemorySmsStore({ maxEntries: config.sms.ledger.max_entries }));
  const ledger = createLedger(config, store, { now, secret: options.secret, metrics });
  const router = createSmsRouter(config, {
    log,
    now,
    ledger,
    metrics,
    providers: options.providers,
    random: options.random,
    clients: options.clients,
  });
  const pumping = createPumpingDefence(config, store, { now, log, metrics, history: options.history });
  const channels = createChannelPlanner(config, ledger, now);
  /** The last SMS did not arrive: a failed receipt, or none in time from a provider that was asked for one. */
  const undelivered = (entry: LedgerEntry) => {
    const state = ledger.stateOf(entry);
    return state === 'failed' || state === 'unknown';
  };

  return {
    router,
    ledger,
    pumping,
    channels,
    handshake(providerName, query) {
      const provider = router.provider(providerName);
      if (!provider?.handshake) return 'unknown_provider';
      return provider.handshake(query) ?? 'refused';
    },
    async receipt(providerName, entryId, request) {
      const provider = router.provider(providerName);
      if (provider?.webhook) {
        const receipts = provider.webhook(request);
        if (!receipts) {
          log.warn(
            { event: 'sms_receipt_refused', provider: providerName },
            'sms receipt refused: signature does not hold',
          );
          return 'refused';
        }
        let recorded = false;
        for (const receipt of receipts) {
          // The webhook names the provider's message id; the ledger found its entry by it when the message was accepted.
          const id = await ledger.entryOfMessage(provider.name, receipt.messageId);
          if (id && (await ledger.receipt(id, provider.name, receipt))) recorded = true;
        }
        return recorded ? 'recorded' : 'ignored';
      }
      if (!provider?.receipt) return 'unknown_provider';
      const receipt = provider.receipt(request);
      if (!receipt) {
        log.warn(
          { event: 'sms_receipt_refused', provider: providerName },
          'sms receipt refused: signature does not hold',
        );
        return 'refused';
      }
      if (!entryId) return 'ignored';
      return (await ledger.receipt(entryId, provider.name, receipt)) ? 'recorded' : 'ignored';
    },
    async fallbackEmail(ctx, phone) {
      if (!config.sms.receipts.email_fallback || !options.confirmedEmailOf) return undefined;
      const entry = await ledger.latest(phone);
      if (
        !entry ||
        entry.channel !== 'sms' ||
        entry.fallback_at !== undefined ||
        entry.verified_at !== undefined ||
        !undelivered(entry)
      )
        return undefined;
      let email: string | undefined;
      try {
        email = await options.confirmedEmailOf(ctx, phone);
      } catch (err) {
        // The identity provider away costs the fallback, never the SMS.
        log.warn(
          { err: isApiError(err) ? err.reason : 'error' },
          'sms fallback: could not look up the account of the phone',
        );
        return undefined;
      }
      return email ? { email, done: () => ledger.markFallback(entry.id) } : undefined;
    },
    async verified(reached, sentAt) {
      const [phoneEntry] = await Promise.all([
        reached.phone ? ledger.verified(reached.phone) : null,
        reached.email ? ledger.verified(reached.email) : null,
      ]);
      // The range's conversion counts the code by when it was issued, just before its send was counted: not
      // by its ledger entry's acceptance, a provider's answer later, or a burst's verifications would be
      // judged a second after its sends, and a range of people who all verified put on watch.
      const sent =
        phoneEntry && phoneEntry.channel !== 'email' ? { at: sentAt, country: phoneEntry.country } : undefined;
      if (reached.phone) await pumping.verified(reached.phone, sent);
    },
  };
}
