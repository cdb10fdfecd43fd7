import type { Config } from '../../core/config/schema';

type Settings = Config['recommendations'];

/** Where the widget id came from: the request, or the configuration key that held it. */
type WidgetSource =
  | 'request'
  | 'widget_id_home'
  | 'widget_id_article'
  | 'widget_id'
  | 'widget_id_home_toptrend'
  | 'widget_id_article_toptrend';

export interface WidgetChoice {
  /** Empty when the configuration holds none for this page. */
  widgetId: string;
  source: WidgetSource;
}

/**
 * The contract's widget table (docs/contract.md#newsletters-and-recommendations): page kind (a `url` means an article) by `toptrend`. A `widget_id` in
 * the request wins. The legacy `widget_id` stands in for `widget_id_article` only, the one row
 * the contract names it for; toptrend rows have no fallback.
 */
export function chooseWidget(
  settings: Settings,
  request: { widget_id?: string | null; url?: string | null; toptrend: boolean },
): WidgetChoice {
  if (request.widget_id) return { widgetId: request.widget_id, source: 'request' };
  const article = Boolean(request.url);
  if (article && request.toptrend)
    return { widgetId: settings.widget_id_article_toptrend, source: 'widget_id_article_toptrend' };
  if (request.toptrend) return { widgetId: settings.widget_id_home_toptrend, source: 'widget_id_home_toptrend' };
  if (!article) return { widgetId: settings.widget_id_home, source: 'widget_id_home' };
  if (!settings.widget_id_article && settings.widget_id) return { widgetId: settings.widget_id, source: 'widget_id' };
  return { widgetId: settings.widget_id_article, source: 'widget_id_article' };
}
