import { z } from 'zod';
import type { Config } from '../core/config/schema';
import type { Logger } from '../core/logger';
import type { CallContext } from '../core/context';
import { createUpstream, type ClientOptions } from './http';

/*
 * The user collector (docs/contract.md#upstream-calls): POST {user_collector.base_url}{ingest_login_path}
 * with JSON {uid, accessToken} and header `x-internal-token: <internal_token>`, within
 * `user_collector.timeout` seconds. Any 2xx is accepted; the reply body is not relied upon.
 */

const collectorReply = z.unknown();

export interface LoginIngestEvent {
  uid: string;
  accessToken: string;
  /** How the person logged in, when not by a code: `passkey`. Absent for a code, so those posts stay as they were. */
  method?: 'passkey';
}

export interface CollectorClient {
  /** False when `user_collector.base_url` is empty: ingest is skipped. */
  readonly configured: boolean;
  /** The ingest URL (no secret in it), for diagnostics. */
  readonly url: string;
  /** Resolves once the collector accepted the event; throws ApiError `upstream_error` otherwise. */
  ingestLogin(ctx: CallContext, event: LoginIngestEvent): Promise<{ status: number; durationMs: number }>;
}

export function collectorUrl(collector: Config['user_collector']): string {
  if (!collector.base_url) return '';
  const path = collector.ingest_login_path.startsWith('/')
    ? collector.ingest_login_path
    : `/${collector.ingest_login_path}`;
  return `${collector.base_url.replace(/\/+$/, '')}${path}`;
}

export function createCollectorClient(
  config: Config,
  log: Logger,
  { upstream, observe, declare }: ClientOptions = {},
): CollectorClient {
  const settings = config.user_collector;
  const url = collectorUrl(settings);
  const collector =
    upstream ??
    createUpstream({
      name: 'collector',
      label: 'user collector',
      timeoutMs: settings.timeout * 1000,
      log,
      observe,
      declare,
      endpoints: ['ingest_login'],
    });
  return {
    configured: url !== '',
    url,
    async ingestLogin(ctx, { uid, accessToken, method }) {
      const response = await collector.call(ctx, {
        endpoint: 'ingest_login',
        method: 'POST',
        url,
        json: method ? { uid, accessToken, method } : { uid, accessToken },
        headers: settings.internal_token ? { 'x-internal-token': settings.internal_token } : {},
        reply: collectorReply,
      });
      return { status: response.status, durationMs: response.durationMs };
    },
  };
}
