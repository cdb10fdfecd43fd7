import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { createRecommendationsClient, widgetItems } from '../../src/clients/recommendations';
import { isApiError } from '../../src/core/errors';
import widget from '../../src/sandbox/fixtures/recommendations/widget.json';
import { testConfig } from '../support/app';
import { useNock } from '../support/nock';

const HOST = 'http://reco.test';
const log = pino({ level: 'silent' });
const client = (recommendations: Record<string, unknown> = {}) =>
  createRecommendationsClient(
    testConfig({ recommendations: { api_url: `${HOST}/v1/widget`, ...recommendations } }),
    log,
  );

useNock();

describe('recommendations client', () => {
  it('posts only widgetId for the home page', async () => {
    const scope = nock(HOST)
      .post('/v1/widget', { widgetId: 'w-home' })
      .matchHeader('content-type', 'application/json')
      .reply(200, widget);
    const reply = await client().recommend(testCtx, { widgetId: 'w-home' });
    expect(reply.items).toEqual(widget.response.items);
    expect(scope.isDone()).toBe(true);
  });

  it('posts context.url for an article page', async () => {
    const scope = nock(HOST)
      .post('/v1/widget', { widgetId: 'w-art', context: { url: 'https://www.example.com/a' } })
      .reply(200, widget);
    await client().recommend(testCtx, { widgetId: 'w-art', url: 'https://www.example.com/a' });
    expect(scope.isDone()).toBe(true);
  });

  it('posts the reader id under user.ids.<user_id_prefix>', async () => {
    const scope = nock(HOST)
      .post('/v1/widget', { widgetId: 'w', user: { ids: { uid_x: 'reader-1' } } })
      .reply(200, widget);
    await client({ user_id_prefix: 'uid_x' }).recommend(testCtx, { widgetId: 'w', udi: 'reader-1' });
    expect(scope.isDone()).toBe(true);
  });

  it('gives up after recommendations.timeout seconds with upstream_error', async () => {
    nock(HOST).post('/v1/widget').delay(5000).reply(200, widget);
    const started = Date.now();
    const err = await client({ timeout: 1 })
      .recommend(testCtx, { widgetId: 'w' })
      .catch((e: unknown) => e);
    expect(isApiError(err) && err.reason).toBe('upstream_error');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a reply holding no list of items as upstream_error', async () => {
    nock(HOST)
      .post('/v1/widget')
      .reply(200, { response: { message: 'no widget' } });
    const err = await client()
      .recommend(testCtx, { widgetId: 'w' })
      .catch((e: unknown) => e);
    expect(isApiError(err) && err.reason).toBe('upstream_error');
  });

  it('answers not_configured without a call when api_url is empty', async () => {
    const err = await client({ api_url: '' })
      .recommend(testCtx, { widgetId: 'w' })
      .catch((e: unknown) => e);
    expect(isApiError(err) && err.reason).toBe('not_configured');
  });

  it.each([
    ['response.items', { response: { items: [{ url: 'u' }] } }],
    ['items', { items: [{ url: 'u' }] }],
    ['response as a list', { response: [{ url: 'u' }] }],
    ['a bare list', [{ url: 'u' }]],
  ])('finds the items in %s', (_shape, body) => {
    expect(widgetItems(body)).toEqual([{ url: 'u' }]);
  });
});
