import { z } from 'zod';
import type { Config } from '../core/config/schema';
import { apiError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { CallContext } from '../core/context';
import { createUpstream, type ClientOptions } from './http';

/*
 * The content-recommendation widget service (docs/contract.md#upstream-calls):
 *   POST {recommendations.api_url}  { widgetId, context: { url } (article pages only),
 *                                     user: { ids: { <user_id_prefix>: udi } } (only with a udi) }
 * Its reply is taken to be `{ response: { items: [ article, ... ] } }`, each article
 * `{ url, thumbnail, click_url, metadata: { 'og-title', 'og-description', description, ... } }`;
 * `{ items: [...] }`, `{ response: [...] }` and a bare array are accepted too. Items that are
 * not objects are dropped; everything else is passed on as sent.
 */

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

export function widgetItems(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (!isTree(body)) return undefined;
  const response = body.response;
  if (isTree(response) && Array.isArray(response.items)) return response.items;
  if (Array.isArray(response)) return response;
  if (Array.isArray(body.items)) return body.items;
  return undefined;
}

const widgetReply = z.unknown().transform((body, ctx) => {
  const items = widgetItems(body);
  if (!items) {
    ctx.addIssue({ code: 'custom', message: 'no list of items in the widget reply' });
    return z.NEVER;
  }
  return items.filter(isTree);
});

interface RecommendationRequest {
  widgetId: string;
  /** The article page; absent on the home page. */
  url?: string;
  /** The reader's id, sent as user.ids.<user_id_prefix>. */
  udi?: string;
}

export type WidgetRequestBody = {
  widgetId: string;
  context?: { url: string };
  user?: { ids: Record<string, string> };
};

interface Recommendations {
  items: Tree[];
  status: number;
  durationMs: number;
}

export interface RecommendationsClient {
  /** The body the call sends, for the debug answer. */
  requestBody(request: RecommendationRequest): WidgetRequestBody;
  /** Throws ApiError `upstream_error` on timeout, error status or a reply without items. */
  recommend(ctx: CallContext, request: RecommendationRequest): Promise<Recommendations>;
}

export function createRecommendationsClient(
  config: Config,
  log: Logger,
  { observe, declare }: ClientOptions = {},
): RecommendationsClient {
  const settings = config.recommendations;
  const upstream = createUpstream({
    name: 'recommendations',
    label: 'raccomandazioni',
    timeoutMs: settings.timeout * 1000,
    log,
    observe,
    declare,
    endpoints: ['widget'],
  });
  const requestBody = ({ widgetId, url, udi }: RecommendationRequest): WidgetRequestBody => ({
    widgetId,
    // The contract: context.url is omitted for home; the whole context object goes with it.
    ...(url ? { context: { url } } : {}),
    ...(udi ? { user: { ids: { [settings.user_id_prefix]: udi } } } : {}),
  });
  return {
    requestBody,
    async recommend(ctx, request) {
      if (!settings.api_url)
        throw apiError('not_configured', {
          params: { key: 'recommendations.api_url' },
          data: { key: 'recommendations.api_url' },
        });
      const { data, status, durationMs } = await upstream.call(ctx, {
        endpoint: 'widget',
        method: 'POST',
        url: settings.api_url,
        json: requestBody(request),
        reply: widgetReply,
      });
      return { items: data, status, durationMs };
    },
  };
}
