import nock from 'nock';
import widget from '../../../src/sandbox/fixtures/recommendations/widget.json';
import ogOnItem from '../../../src/sandbox/fixtures/recommendations/widget-og-on-item.json';
import { contentApp, RECO, useNock } from './content-app';

useNock();

const ARTICLE = 'https://www.example.com/cronaca/articolo';
const expectWidget = (body: nock.DataMatcherMap) => nock(RECO).post('/widget', body).reply(200, widget);

describe('recommendations: widget selection', () => {
  it.each([
    ['home', {}, { widgetId: 'w-home' }],
    ['article', { url: ARTICLE }, { widgetId: 'w-article', context: { url: ARTICLE } }],
    ['home toptrend', { toptrend: true }, { widgetId: 'w-home-tt' }],
    ['article toptrend', { url: ARTICLE, toptrend: true }, { widgetId: 'w-article-tt', context: { url: ARTICLE } }],
  ])('posts the %s widget', async (_page, request, upstreamBody) => {
    const scope = expectWidget(upstreamBody);
    const res = await contentApp().post('recommendations', request);
    expect(scope.isDone()).toBe(true);
    expect(res.body).toEqual({ response: { items: widget.response.items } });
  });

  it('lets widget_id in the request override the table', async () => {
    const scope = expectWidget({ widgetId: 'w-custom', context: { url: ARTICLE } });
    await contentApp().post('recommendations', { url: ARTICLE, toptrend: true, widget_id: 'w-custom' });
    expect(scope.isDone()).toBe(true);
  });

  it('falls back to the legacy widget_id for an article when widget_id_article is empty', async () => {
    const scope = expectWidget({ widgetId: 'w-legacy', context: { url: ARTICLE } });
    await contentApp({ recommendations: { widget_id_article: '', widget_id: 'w-legacy' } }).post('recommendations', {
      url: ARTICLE,
    });
    expect(scope.isDone()).toBe(true);
  });

  it('does not use the legacy widget_id for the article toptrend row', async () => {
    const res = await contentApp({ recommendations: { widget_id_article_toptrend: '', widget_id: 'w-legacy' } }).post(
      'recommendations',
      { url: ARTICLE, toptrend: true },
    );
    expect(res.body).toMatchObject({
      response: { items: [] },
      success: false,
      data: { reason: 'not_configured', key: 'recommendations.widget_id_article_toptrend' },
    });
  });

  it('answers not_configured without a call when the chosen widget id is empty', async () => {
    const res = await contentApp({ recommendations: { widget_id_home: '' } }).post('recommendations', {});
    expect(res.body).toEqual({
      response: { items: [] },
      success: false,
      error: expect.any(String),
      data: { reason: 'not_configured', key: 'recommendations.widget_id_home' },
    });
  });

  it("writes the failure of its own body in the reader's language, Italian by default", async () => {
    const app = contentApp({ recommendations: { widget_id_home: '' } });
    expect((await app.post('recommendations', {})).body.error).toBe(
      'Servizio non configurato (recommendations.widget_id_home).',
    );
    expect((await app.post('recommendations', {}).set('Accept-Language', 'en-GB,en;q=0.9')).body.error).toBe(
      'Service not configured (recommendations.widget_id_home).',
    );
  });

  it('takes an empty url as the home page', async () => {
    const scope = expectWidget({ widgetId: 'w-home' });
    await contentApp().post('recommendations', { url: '', udi: null, widget_id: null });
    expect(scope.isDone()).toBe(true);
  });

  it('sends the udi as user.ids.<user_id_prefix>', async () => {
    const scope = expectWidget({ widgetId: 'w-home', user: { ids: { usi: 'reader-42' } } });
    await contentApp().post('recommendations', { udi: 'reader-42' });
    expect(scope.isDone()).toBe(true);
  });

  it('refuses a url that is not http(s) as invalid_request', async () => {
    const res = await contentApp().post('recommendations', { url: 'javascript:alert(1)' });
    expect(res.body.data).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: 'url', message: expect.any(String) }],
    });
  });
});

describe('recommendations: failures', () => {
  it('answers an empty list with upstream_error within the timeout when the widget service is slow', async () => {
    nock(RECO).post('/widget').delay(5000).reply(200, widget);
    const started = Date.now();
    const res = await contentApp({ recommendations: { timeout: 1 } }).post('recommendations', {});
    expect(Date.now() - started).toBeLessThan(2500);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      response: { items: [] },
      success: false,
      error: expect.any(String),
      data: { reason: 'upstream_error' },
    });
  });

  it('answers the debug envelope with no articles and the upstream status when the widget service fails', async () => {
    nock(RECO).post('/widget').reply(500);
    const res = await contentApp({ recommendations: { debug: true } }).post('recommendations', { url: ARTICLE });
    expect(res.body).toMatchObject({
      success: false,
      data: {
        reason: 'upstream_error',
        success: false,
        count: 0,
        articles: [],
        pageUrl: ARTICLE,
        widget_id: 'w-article',
      },
      recommendations_debug: { upstream: { status: 500, error: 'upstream_error' } },
    });
  });
});

describe('recommendations: debug answer', () => {
  it('answers the envelope with the page, the widget and the articles normalised', async () => {
    expectWidget({ widgetId: 'w-article', context: { url: ARTICLE }, user: { ids: { usi: 'reader-42' } } });
    const res = await contentApp({ recommendations: { debug: true } }).post('recommendations', {
      url: ARTICLE,
      udi: 'reader-42',
    });

    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({
      success: true,
      count: 4,
      pageUrl: ARTICLE,
      userIdentified: true,
      toptrend: false,
      has_article_url: true,
      widget_id: 'w-article',
    });
    expect(res.body.data.articles[1]).toEqual({
      title: 'Finale di coppa, le formazioni',
      url: 'https://www.example.com/sport/2024/05/01/finale-di-coppa',
      thumbnail: 'https://img.example.com/finale.jpg',
      click_url: 'https://reco.example.com/click?i=2',
      description: 'Le probabili formazioni della finale di stasera.',
      tassonomia: 'sport/calcio',
      'kw-sentiment': 'positive',
      category0: 'sport',
      category1: 'calcio',
    });
  });

  it('maps og-* fields found on the item as well as under metadata, metadata first when both', async () => {
    const scope = nock(RECO).post('/widget', { widgetId: 'w-home' }).reply(200, ogOnItem);
    const res = await contentApp({ recommendations: { debug: true } }).post('recommendations', {});
    expect(scope.isDone()).toBe(true);
    expect(res.body.data.count).toBe(3);
    expect(res.body.data.articles).toEqual([
      {
        title: 'Riapre il mercato coperto',
        url: 'https://www.example.com/cronaca/2024/05/02/mercato-coperto',
        thumbnail: 'https://img.example.com/mercato.jpg',
        click_url: 'https://reco.example.com/click?i=11',
        description: 'Dopo due anni di lavori il mercato coperto riapre con quaranta banchi.',
        author: 'Redazione Cronaca',
      },
      {
        title: 'Maratona, vince il keniano',
        url: 'https://www.example.com/sport/2024/05/02/maratona',
        thumbnail: 'https://img.example.com/maratona.jpg',
        click_url: 'https://reco.example.com/click?i=12',
        description: 'Record del percorso battuto di quaranta secondi.',
      },
      {
        title: 'Bollette, cosa cambia a giugno',
        url: 'https://www.example.com/economia/2024/05/02/bollette',
        thumbnail: 'https://img.example.com/bollette.jpg',
        click_url: 'https://reco.example.com/click?i=13',
        description: 'Le nuove tariffe dal primo giugno.',
      },
    ]);
  });

  it('truncates a long description to description_length on a word boundary', async () => {
    expectWidget({ widgetId: 'w-home' });
    const res = await contentApp({ recommendations: { debug: true, description_length: 60 } }).post(
      'recommendations',
      {},
    );
    expect(res.body.data.articles[0].description).toBe('Trenta ettari di verde, piste ciclabili e un lago…');
  });

  it('reports the widget chosen, the request sent and the upstream status, without the query of api_url', async () => {
    nock(RECO).post('/widget', { widgetId: 'w-home-tt' }).query({ key: 'reco-secret' }).reply(200, widget);
    const res = await contentApp({ recommendations: { debug: true, api_url: `${RECO}/widget?key=reco-secret` } }).post(
      'recommendations',
      { toptrend: true },
    );
    expect(res.body.recommendations_debug).toEqual({
      widget: { id: 'w-home-tt', source: 'widget_id_home_toptrend' },
      request: { method: 'POST', url: `${RECO}/widget`, timeout_ms: 10000, body: { widgetId: 'w-home-tt' } },
      upstream: { status: 200, duration_ms: expect.any(Number), items: 4 },
    });
    expect(JSON.stringify(res.body)).not.toContain('reco-secret');
  });
});
