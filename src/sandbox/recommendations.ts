import widget from './fixtures/recommendations/widget.json';
import type { SandboxFake } from './fake';

const PREFIX = '/recommendations';

/** The recommendation widget service: the same handful of articles for every widget. */
export function createRecommendationsFake(): SandboxFake {
  return {
    name: 'recommendations',
    mount(router) {
      router.post(`${PREFIX}/widget`, (ctx) => {
        const body = ctx.request.body as { widgetId?: unknown } | undefined;
        if (typeof body?.widgetId !== 'string' || body.widgetId === '') {
          ctx.status = 400;
          ctx.body = { error: 'widgetId is required' };
          return;
        }
        ctx.body = widget;
      });
    },
    configure: ({ baseUrl }) => ({
      recommendations: {
        api_url: `${baseUrl}${PREFIX}/widget`,
        widget_id_home: 'sandbox-home',
        widget_id_article: 'sandbox-article',
        widget_id_home_toptrend: 'sandbox-home-toptrend',
        widget_id_article_toptrend: 'sandbox-article-toptrend',
      },
    }),
  };
}
