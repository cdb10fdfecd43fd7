import { z } from 'zod';
import type { Config } from '../core/config/schema';
import type { Logger } from '../core/logger';
import type { CallContext } from '../core/context';
import { createUpstream, type ClientOptions } from './http';

/*
 * The mailing-list service (docs/contract.md#upstream-calls):
 *   GET {esp_url}/tracker/securesub/email/{email}/ml/{mlids}?api_key=<KEY>
 * The email is URL-encoded as one path segment; list ids are digits, joined by commas.
 * No public model describes the reply: a 2xx is a subscription unless the body says
 * otherwise (see `refusal`).
 */

export const subscribeUrl = (espUrl: string, email: string, mlids: readonly string[]): string =>
  `${espUrl.replace(/\/+$/, '')}/tracker/securesub/email/${encodeURIComponent(email)}/ml/${mlids.join(',')}`;

/** Any JSON or text; the fields read are optional. */
const subscribeReply = z.unknown();

const FAILED = new Set(['error', 'ko', 'failed', 'failure', 'fail']);
const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 200) : undefined;

/** A 2xx body that still reports a failure: `success: false`, `status`/`result` "error"/"ko", or an `error` field. */
function refusal(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  const failed = [b.status, b.result].some((v) => typeof v === 'string' && FAILED.has(v.toLowerCase()));
  const error =
    typeof b.error === 'object' && b.error !== null
      ? (text((b.error as Record<string, unknown>).message) ?? 'error')
      : text(b.error);
  if (b.success !== false && !failed && error === undefined) return undefined;
  return error ?? text(b.message) ?? 'refused';
}

/** The reply's own words, for the answer. */
const replyMessage = (body: unknown): string | undefined =>
  typeof body === 'object' && body !== null ? text((body as Record<string, unknown>).message) : text(body);

interface SubscribeRequest {
  email: string;
  mlids: readonly string[];
  apiKey: string;
}

interface SubscribeOutcome {
  accepted: boolean;
  status: number;
  message?: string;
}

export interface MailingListClient {
  /** One call for one headline's key. Transport failures throw ApiError `upstream_error`. */
  subscribe(ctx: CallContext, request: SubscribeRequest): Promise<SubscribeOutcome>;
}

export function createMailingListClient(
  config: Config,
  log: Logger,
  { observe, declare }: ClientOptions = {},
): MailingListClient {
  const upstream = createUpstream({
    name: 'mailing_list',
    label: 'newsletter',
    timeoutMs: config.newsletter.timeout_seconds * 1000,
    log,
    observe,
    declare,
    endpoints: ['securesub'],
  });
  return {
    async subscribe(ctx, { email, mlids, apiKey }) {
      const { status, data } = await upstream.call(ctx, {
        endpoint: 'securesub',
        method: 'GET',
        url: subscribeUrl(config.newsletter.esp_url, email, mlids),
        params: { api_key: apiKey },
        reply: subscribeReply,
      });
      const refused = refusal(data);
      const message = refused ?? replyMessage(data);
      return { accepted: refused === undefined, status, ...(message ? { message } : {}) };
    },
  };
}
