import { z } from 'zod';
import type { Config } from '../core/config/schema';
import type { Logger } from '../core/logger';
import type { CallContext } from '../core/context';
import { createUpstream, type ClientOptions } from './http';

/*
 * The SMS gateway (docs/contract.md#upstream-calls): POST {sms.api_url} with JSON
 * { receiver: E.164, body, sender } and `Authorization: Bearer <sms.api_key>`.
 * Any 2xx is an accepted message; the reply body is not relied upon.
 */

const gatewayReply = z.unknown();

export interface SmsMessage {
  /** E.164, already normalised by the caller. */
  to: string;
  body: string;
}

export interface SmsClient {
  /** The contract: the channel is skipped when `sms.api_url` or `sms.api_key` is empty. */
  readonly configured: boolean;
  /** Resolves with the gateway's HTTP status once it accepted the message; throws ApiError `upstream_error` otherwise. */
  send(ctx: CallContext, message: SmsMessage): Promise<{ status: number; durationMs: number }>;
}

export function createSmsClient(config: Config, log: Logger, { upstream, observe }: ClientOptions = {}): SmsClient {
  const { api_url: url, api_key: apiKey, sender, timeout_seconds: timeoutSeconds } = config.sms;
  const gateway = upstream ?? createUpstream({ name: 'sms', label: 'SMS', timeoutMs: timeoutSeconds * 1000, log, observe });
  return {
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
      return { status: response.status, durationMs: response.durationMs };
    },
  };
}
