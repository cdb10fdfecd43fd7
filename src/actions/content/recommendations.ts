import { z } from 'zod';
import { apiError, withDetails, isApiError, messageIn } from '../../core/errors';
import type { WidgetRequestBody } from '../../clients/recommendations';
import type { Config } from '../../core/config/schema';
import { defineAction, type ActionResult } from '../action';
import { NOT_BLANK } from '../document-rules';
import { recommendedArticle, toArticle } from './article';
import { chooseWidget, type WidgetChoice } from './widget';

/**
 * An empty string is taken as absent: a home page sends `url: ""` as often as null. Stated as a
 * union, so the document says `""` is accepted too (a preprocess would hide it).
 */
const optional = <T extends z.ZodType>(schema: T) =>
  z
    .union([z.literal(''), schema])
    .nullish()
    .transform((v) => (v === '' ? null : (v as z.output<T> | null | undefined)));

/** An http(s) address with a host, printable ASCII after it: what the document states, enforced (z.url alone takes spaces). */
const PAGE_URL = /^https?:\/\/[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d{1,5})?(?:[/?#][!-~]*)?$/;

const recommendationsRequest = z.object({
  url: optional(
    z
      .url({ protocol: /^https?$/, abort: true })
      .max(2048)
      .regex(PAGE_URL, 'must be an http(s) address, its path and query in printable ASCII'),
  ),
  udi: optional(z.string().trim().min(1).max(256).meta(NOT_BLANK)),
  toptrend: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
  widget_id: optional(z.string().trim().min(1).max(128).meta(NOT_BLANK)),
});

const recommendationsResponse = z.object({
  success: z.boolean(),
  count: z.number().int(),
  pageUrl: z.string().nullable(),
  userIdentified: z.boolean(),
  toptrend: z.boolean(),
  has_article_url: z.boolean(),
  widget_id: z.string(),
  articles: z.array(recommendedArticle),
});

/** The api_url without its query, which may carry a key. */
const endpointOf = (apiUrl: string) => apiUrl.split(/[?#]/)[0];

type Input = z.infer<typeof recommendationsRequest>;
type Settings = Config['recommendations'];

/** What the debug answer says about the page, the widget and the call, whatever its outcome. */
function describe(input: Input, widget: WidgetChoice, settings: Settings, body: WidgetRequestBody) {
  return {
    page: {
      pageUrl: input.url ?? null,
      userIdentified: Boolean(input.udi),
      toptrend: input.toptrend,
      has_article_url: Boolean(input.url),
      widget_id: widget.widgetId,
    },
    debug: {
      widget: { id: widget.widgetId, source: widget.source },
      request: { method: 'POST', url: endpointOf(settings.api_url), timeout_ms: settings.timeout * 1000, body },
    } as Record<string, unknown>,
  };
}

/** Failures answer at once with an empty list, in the shape the frontend already reads. */
function failed(
  err: unknown,
  settings: Settings,
  about: ReturnType<typeof describe>,
  durationMs: number,
  locale: string | undefined,
): ActionResult {
  if (!isApiError(err) || (err.reason !== 'upstream_error' && err.reason !== 'not_configured')) throw err;
  // Outside the envelope, so the envelope's mapping does not choose its language: it is chosen here, the same way.
  if (!settings.debug)
    return {
      body: {
        response: { items: [] },
        success: false,
        error: messageIn(err, locale),
        data: { reason: err.reason, ...err.data },
      },
    };
  const upstream =
    err.reason === 'upstream_error'
      ? { status: err.data.upstream_status ?? 0, duration_ms: durationMs, error: err.reason }
      : null;
  throw withDetails(err, {
    data: { success: false, count: 0, ...about.page, articles: [] },
    extra: { recommendations_debug: { ...about.debug, upstream } },
  });
}

export const recommendations = defineAction({
  name: 'recommendations',
  summary: 'Recommended articles from the widget chosen for the page (home or article, toptrend or not).',
  request: recommendationsRequest,
  response: recommendationsResponse,
  bodyResponse: z
    .object({ response: z.object({ items: z.array(z.looseObject({})) }) })
    .loose()
    .describe(
      'With recommendations.debug false: only the upstream items, with their original fields, not the envelope; a failure adds success false, error and data.reason.',
    ),
  reasons: ['not_configured'],
  async handler(input, ctx): Promise<ActionResult> {
    const { deps } = ctx;
    const settings = deps.config.recommendations;
    const widget = chooseWidget(settings, input);
    const request = { widgetId: widget.widgetId, url: input.url ?? undefined, udi: input.udi ?? undefined };
    const about = describe(input, widget, settings, deps.recommendations.requestBody(request));
    const started = performance.now();
    try {
      if (!widget.widgetId) {
        const key = `recommendations.${widget.source}`;
        throw apiError('not_configured', { params: { key }, data: { key } });
      }
      const reply = await deps.recommendations.recommend(ctx, request);
      if (!settings.debug) return { body: { response: { items: reply.items } } };
      const articles = reply.items
        .map((item) => toArticle(item, settings.description_length))
        .filter((a) => a !== undefined);
      const upstream = { status: reply.status, duration_ms: reply.durationMs, items: reply.items.length };
      return {
        data: { success: true, count: articles.length, ...about.page, articles },
        extra: { recommendations_debug: { ...about.debug, upstream } },
      };
    } catch (err) {
      return failed(err, settings, about, Math.round(performance.now() - started), ctx.locale);
    }
  },
});
