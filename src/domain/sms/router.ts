import type { Config, PhoneChannel, SmsProviderConfig } from '../../core/config/schema';
import { withSpan, type CallContext } from '../../core/context';
import { apiError, isApiError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import type { Metrics } from '../../core/metrics';
import type { ClientOptions } from '../../clients/http';
import {
  createGatewayProvider,
  type SmsClient,
  type SmsMessage,
  type SmsProvider,
  type SmsSent,
} from '../../clients/sms';
import { createTwilioProvider } from '../../clients/twilio';
import { createWhatsAppCloudProvider } from '../../clients/whatsapp-cloud';
import { numberFacts } from '../phone';
import { createBreaker, type Breaker, type BreakerState } from './breaker';
import type { Ledger } from './ledger';
import type { NotSentReason } from './store';

/*
 * The SMS channel as the OTP service sees it (one `SmsClient`), over `sms.providers`: the
 * providers that serve the destination's country, the first picked by weight, then the others
 * in their configured order. A provider that gives no answer, times out, or answers 5xx or 429
 * accepted nothing, so the same message goes to the next one; any other answer ends the send,
 * and a 2xx is the only acceptance: once one provider accepted, no other is asked (one code,
 * one SMS). Each provider has a circuit breaker (breaker.ts), so an outage costs one timeout
 * per `sms.breaker.failures` sends, not one per send. Every accepted message becomes a ledger entry.
 *
 * A phone has channels too (`sms.channels`: `whatsapp`, `sms`), tried in the order the message
 * names them, each with its own providers (a provider serves one channel). A channel none of whose
 * providers took the message, for any reason (refused: not on WhatsApp, a template rejected; down;
 * circuits open), passes it to the next channel at once: still one message, the first accepted.
 */

export const RECEIPT_PATH = '/_sms/receipts/';

/** How the catalogue's upstream_error names a phone channel's service ("Servizio WhatsApp non disponibile"), as the clients' labels do. */
const CHANNEL_LABELS: Readonly<Record<PhoneChannel, string>> = { sms: 'SMS', whatsapp: 'WhatsApp' };

export interface SmsRouter extends SmsClient {
  readonly providers: readonly SmsProvider[];
  provider(name: string): SmsProvider | undefined;
  /** Each provider's circuit, and whether its messages get receipts (it posts them and `sms.receipts.callback_base_url` is set). */
  breakerStates(): Array<{ provider: string; channel: PhoneChannel; state: BreakerState; receipts: boolean }>;
  send(ctx: CallContext, message: SmsMessage & { channels?: readonly PhoneChannel[] }): Promise<SmsSent>;
}

export interface SmsRouterOptions {
  log: Logger;
  now: () => number;
  ledger?: Ledger;
  metrics?: Pick<Metrics, 'smsSend' | 'smsBreaker' | 'observeUpstream'>;
  /** Prepared providers instead of the configuration's (tests). */
  providers?: SmsProvider[];
  /** Weighted choice; injectable so tests choose. */
  random?: () => number;
  clients?: ClientOptions;
}

/** The providers of the configuration; with `sms.providers` empty, the contract's one gateway of `sms.api_url`. */
function configuredProviders(config: Config, log: Logger, clients: ClientOptions = {}): SmsProvider[] {
  const listed: SmsProviderConfig[] =
    config.sms.providers.length > 0
      ? config.sms.providers
      : [{ kind: 'gateway', name: 'gateway', countries: [], weight: 1, api_url: '', api_key: '', sender: '' }];
  return listed.map((provider) => {
    switch (provider.kind) {
      case 'twilio':
      case 'twilio_whatsapp':
        return createTwilioProvider(config, provider, log, clients);
      case 'whatsapp_cloud':
        return createWhatsAppCloudProvider(config, provider, log, clients);
      default:
        return createGatewayProvider(config, provider, log, clients);
    }
  });
}

/** No answer, a timeout, a 5xx or a 429: the provider accepted nothing, so another may be asked. */
function failsOver(err: unknown): boolean {
  if (!isApiError(err) || err.reason !== 'upstream_error') return true;
  const status = err.data.upstream_status;
  return typeof status !== 'number' || status >= 500 || status === 429;
}

/** Why a provider did not take a message, in the ledger's words (store.ts, NotSentReason). */
function notSentReason(err: unknown): NotSentReason {
  if (!failsOver(err)) return 'refused';
  return isApiError(err) && typeof err.data.upstream_status === 'number' ? 'error' : 'no_answer';
}

export function createSmsRouter(config: Config, options: SmsRouterOptions): SmsRouter {
  const { log, now, ledger, metrics } = options;
  const random = options.random ?? Math.random;
  const providers = (options.providers ?? configuredProviders(config, log, options.clients)).filter(
    (p) => p.configured,
  );
  const breakers = new Map<string, Breaker>(
    providers.map((p) => [
      p.name,
      createBreaker({
        failures: config.sms.breaker.failures,
        openMs: config.sms.breaker.open_seconds * 1000,
        onChange: (state) => {
          metrics?.smsBreaker(p.name, state, p.channel ?? 'sms');
          log.warn({ provider: p.name, breaker: state }, 'sms provider circuit');
        },
      }),
    ]),
  );
  for (const p of providers) metrics?.smsBreaker(p.name, 'closed', p.channel ?? 'sms');
  const callbackBase = config.sms.receipts.callback_base_url.replace(/\/+$/, '');
  const prefixDigits = config.sms.pumping.prefix_digits;

  /** The eligible providers in the order they are tried: one picked by weight, then the rest as configured. */
  function order(country: string, channel: PhoneChannel): SmsProvider[] {
    const eligible = providers.filter(
      (p) => (p.channel ?? 'sms') === channel && (p.countries.length === 0 || p.countries.includes(country)),
    );
    const total = eligible.reduce((sum, p) => sum + p.weight, 0);
    if (total === 0 || eligible.length < 2) return eligible;
    let pick = random() * total;
    const first = eligible.find((p) => (pick -= p.weight) < 0) ?? eligible[0]!;
    return [first, ...eligible.filter((p) => p !== first)];
  }

  return {
    configured: providers.length > 0,
    providers,
    provider: (name) => providers.find((p) => p.name === name),
    breakerStates: () =>
      // A per-message callback needs our public URL; an app-wide webhook (Meta) is registered with the provider instead.
      providers.map((p) => ({
        provider: p.name,
        channel: p.channel ?? 'sms',
        state: breakers.get(p.name)!.state(now()),
        receipts: p.receipts && (p.webhook !== undefined || callbackBase !== ''),
      })),
    async send(ctx, { channels = ['sms'], ...message }) {
      // The number's facts are cached in src/domain/phone.ts: the OTP service parsed this number already.
      const { region: country, type } = numberFacts(message.to);
      const plans = channels.map((channel) => ({ channel, candidates: order(country, channel) }));
      // Named as the person expects the code: by the last channel there was to try.
      const unavailable = (detail: string) =>
        apiError('upstream_error', {
          params: { service: CHANNEL_LABELS[plans.at(-1)?.channel ?? 'sms'] },
          data: { upstream: 'sms', detail },
        });
      const range = message.to.slice(1, 1 + prefixDigits);
      // Counted beside those sent, so sent + not sent = tried; a ledger that cannot write costs the record, never the answer.
      const notSent = async (provider: string, channel: PhoneChannel, reason: NotSentReason) => {
        await ledger
          ?.recordNotSent({ e164: message.to, country, numberType: type, range, provider, channel, reason })
          .catch((err: unknown) =>
            log.error(
              { err: isApiError(err) ? err.reason : 'error', provider },
              'sms ledger: could not record a message no provider took',
            ),
          );
      };
      if (plans.every((plan) => plan.candidates.length === 0)) {
        await notSent('', plans.at(-1)?.channel ?? 'sms', 'no_provider');
        throw unavailable('no provider serves this country');
      }
      const id = ledger?.newId();
      let lastError: unknown;
      // The last provider asked and why it failed, or the last one skipped with its circuit open.
      let last: { provider: string; channel: PhoneChannel; reason: NotSentReason } | undefined;
      const refused: PhoneChannel[] = [];
      let attempt = 0;
      for (const { channel, candidates } of plans) {
        for (const provider of candidates) {
          const breaker = breakers.get(provider.name)!;
          attempt += 1;
          // Each provider considered is a span of the trace, the skipped ones too: "why not the first?" is read there.
          const span = ctx.span?.child('sms.attempt', {
            'lfa.sms.provider': provider.name,
            'lfa.sms.channel': channel,
            'lfa.sms.attempt': attempt,
          });
          if (!breaker.tryAcquire(now())) {
            if (lastError === undefined) last = { provider: provider.name, channel, reason: 'circuit_open' };
            span?.set({ 'lfa.sms.skipped': true, 'lfa.sms.outcome': 'circuit_open' });
            span?.end();
            continue;
          }
          // A provider that posts per message is told where; one with a webhook per app (Meta) knows already.
          const callbackUrl =
            provider.receipts && !provider.webhook && callbackBase && id
              ? `${callbackBase}${RECEIPT_PATH}${provider.name}?m=${id}`
              : undefined;
          const started = performance.now();
          let sent: SmsSent;
          try {
            sent = await provider.send(withSpan(ctx, span), { ...message, ...(callbackUrl ? { callbackUrl } : {}) });
          } catch (err) {
            const durationMs = performance.now() - started;
            lastError = err;
            last = { provider: provider.name, channel, reason: notSentReason(err) };
            if (span) {
              span.set({ 'lfa.sms.outcome': last.reason });
              span.fail(last.reason);
              span.end();
            }
            if (!failsOver(err)) {
              // The provider answered: it is up, and it refused this message (a bad number, not on WhatsApp, a template rejected). Another of this channel would be asked the same.
              breaker.success();
              metrics?.smsSend(provider.name, country, 'failed', durationMs, channel);
              break;
            }
            breaker.failure(now());
            metrics?.smsSend(provider.name, country, 'failover', durationMs, channel);
            log.warn(
              {
                provider: provider.name,
                channel,
                reason: isApiError(err) ? err.reason : 'error',
                status: isApiError(err) ? err.data.upstream_status : undefined,
              },
              'sms provider failed, trying the next',
            );
            continue;
          }
          breaker.success();
          span?.set({ 'lfa.sms.outcome': 'accepted' });
          span?.end();
          metrics?.smsSend(provider.name, country, 'accepted', performance.now() - started, channel);
          // A webhook per app (Meta) names the provider's message id, not our entry: the ledger indexes it.
          const receiptAsked = callbackUrl !== undefined || (provider.webhook !== undefined && provider.receipts);
          if (ledger && id) {
            // Accepted is final: a ledger that cannot write costs the record, never a second message.
            await ledger
              .recordSms({
                id,
                e164: message.to,
                country,
                numberType: type,
                range: message.to.slice(1, 1 + prefixDigits),
                provider: provider.name,
                channel,
                messageId: sent.messageId,
                receiptAsked,
              })
              .catch((err: unknown) =>
                log.error(
                  { err: isApiError(err) ? err.reason : 'error', provider: provider.name },
                  'sms ledger: could not record an accepted message',
                ),
              );
          }
          if (refused.length > 0)
            log.warn(
              { channel, refused, country },
              'code sent by a later channel: the first refused it or could not take it',
            );
          return { ...sent, provider: provider.name, channel, ...(refused.length > 0 ? { refused } : {}) };
        }
        // A channel with no provider for this country was never a choice; one whose providers all failed is a refusal.
        if (candidates.length > 0) refused.push(channel);
      }
      if (last) await notSent(last.provider, last.channel, last.reason);
      throw lastError ?? unavailable('every provider is unavailable (circuit open)');
    },
  };
}
