import { z } from 'zod';
import type { Config, PhoneChannel, SmsProviderConfig } from '../core/config/schema';
import type { Logger } from '../core/logger';
import type { CallContext } from '../core/context';
import { createUpstream, type ClientOptions } from './http';

/*
 * The SMS gateway (docs/contract.md#upstream-calls): POST {sms.api_url} with JSON
 * { receiver: E.164, body, sender } and `Authorization: Bearer <sms.api_key>`.
 * Any 2xx is an accepted message; the reply body is not relied upon.
 *
 * It is also the first kind of `sms.providers` (src/clients/twilio.ts is the second): every
 * provider client has the shape of `SmsProvider`, and the domain's router
 * (src/domain/sms/router.ts) picks, fails over and counts.
 */

const gatewayReply = z.unknown();

export interface SmsMessage {
  /** E.164, already normalised by the caller. */
  to: string;
  body: string;
  /** The code alone: WhatsApp templates carry it as a parameter (and in their copy-code button), not in a text of ours. */
  code?: string;
  /** The language the body is in (templates/<locale>/): a WhatsApp template is sent in its language. */
  locale?: string;
  /** Where the provider should post this message's delivery receipt (providers that send them). */
  callbackUrl?: string;
}

export interface SmsSent {
  status: number;
  durationMs: number;
  /** The provider's id of the message, when its reply names one (receipts refer to it). */
  messageId?: string;
  /** Which provider accepted it (`sms.providers` name). */
  provider?: string;
  /** The channel it went by (the router's answer). */
  channel?: PhoneChannel;
  /** The channels tried before it that refused the message or could not take it (the router's answer). */
  refused?: PhoneChannel[];
}

export interface SmsClient {
  /** The contract: the channel is skipped when `sms.api_url` or `sms.api_key` is empty. */
  readonly configured: boolean;
  /** Resolves with the gateway's HTTP status once it accepted the message; throws ApiError `upstream_error` otherwise. */
  send(ctx: CallContext, message: SmsMessage): Promise<SmsSent>;
}

/** Delivery as a provider's receipt tells it; `pending` for the intermediate states that say nothing yet. */
export type ReceiptStatus = 'delivered' | 'read' | 'failed' | 'pending' | 'unknown';

export interface SmsReceipt {
  messageId: string;
  status: ReceiptStatus;
  /** The provider's error code of a failed delivery, when it gives one. */
  errorCode?: string;
}

/** A provider's callback as the receipt endpoint received it. */
export interface ReceiptRequest {
  /** The full URL the provider called (its signature covers it): the public base URL and the path with its query. */
  url: string;
  header(name: string): string | undefined;
  /** The form parameters of the body (empty for a JSON body). */
  form: Record<string, string>;
  /** The body as received, byte for byte (a signature over the raw body checks this). */
  rawBody?: string;
}

export interface SmsProvider extends SmsClient {
  readonly name: string;
  readonly kind: SmsProviderConfig['kind'];
  /** The channel it delivers on (absent: `sms`): the router tries a phone's channels in order, each with its own providers. */
  readonly channel?: PhoneChannel;
  /** Regions it serves; empty: every region. */
  readonly countries: readonly string[];
  readonly weight: number;
  /** Whether it posts signed delivery receipts (`receipt` reads them). */
  readonly receipts: boolean;
  /** The receipt of an authentic callback, or null when its signature does not hold (or it is not a receipt). */
  receipt?(request: ReceiptRequest): SmsReceipt | null;
  /**
   * A webhook that names messages by the provider's id rather than by our callback URL (Meta's
   * is one URL per app): its receipts, or null when its signature does not hold.
   */
  webhook?(request: ReceiptRequest): SmsReceipt[] | null;
  /** The webhook's subscription handshake (Meta's GET with hub.verify_token): the challenge to echo, or null. */
  handshake?(query: URLSearchParams): string | null;
}

export function createSmsClient(config: Config, log: Logger, options: ClientOptions = {}): SmsClient {
  return createGatewayProvider(
    config,
    { kind: 'gateway', name: 'gateway', countries: [], weight: 1, api_url: '', api_key: '', sender: '' },
    log,
    options,
  );
}

/** The contract's gateway as a provider; its own url, key and sender, or `sms.*`'s when empty. */
export function createGatewayProvider(
  config: Config,
  provider: Extract<SmsProviderConfig, { kind: 'gateway' }>,
  log: Logger,
  { upstream, observe, declare }: ClientOptions = {},
): SmsProvider {
  const url = provider.api_url || config.sms.api_url;
  const apiKey = provider.api_key || config.sms.api_key;
  const sender = provider.sender || config.sms.sender;
  const name = provider.name || provider.kind;
  const timeoutSeconds = provider.timeout_seconds ?? config.sms.timeout_seconds;
  // The single gateway of today keeps its upstream name (`sms`): dashboards of lfa_upstream_calls_total stay true.
  const gateway =
    upstream ??
    createUpstream({
      name: name === 'gateway' ? 'sms' : `sms_${name}`,
      label: 'SMS',
      timeoutMs: timeoutSeconds * 1000,
      log,
      observe,
      declare,
      endpoints: ['send'],
    });
  return {
    name,
    kind: 'gateway',
    channel: 'sms',
    countries: provider.countries,
    weight: provider.weight,
    receipts: false,
    configured: url !== '' && apiKey !== '',
    async send(ctx, { to, body }) {
      const response = await gateway.call(ctx, {
        endpoint: 'send',
        method: 'POST',
        url,
        json: { receiver: to, body, sender },
        headers: { Authorization: `Bearer ${apiKey}` },
        reply: gatewayReply,
      });
      const id = (response.data as { id?: unknown } | null)?.id;
      return {
        status: response.status,
        durationMs: response.durationMs,
        provider: name,
        ...(typeof id === 'string' ? { messageId: id } : {}),
      };
    },
  };
}
