import nock from 'nock';
import feedA from '../../../src/sandbox/fixtures/feeds/feed_a.json';
import feedB from '../../../src/sandbox/fixtures/feeds/feed_b.json';
import feedC from '../../../src/sandbox/fixtures/feeds/feed_c.json';
import feedD from '../../../src/sandbox/fixtures/feeds/feed_d.json';
import { contentApp, FEEDS_HOST, useNock } from './content-app';

useNock();

const documents = { feed_a: feedA, feed_b: feedB, feed_c: feedC, feed_d: feedD };
const serveAll = () => {
  const scope = nock(FEEDS_HOST);
  for (const [feed, document] of Object.entries(documents)) scope.get(`/nl/${feed}`).reply(200, document);
  return scope;
};

/** deps.now under the test's control. */
function clock() {
  let now = 1_700_000_000_000;
  return { now: () => now, advance: (seconds: number) => (now += seconds * 1000) };
}

describe('newsletter_feed', () => {
  it('fetches the four feeds and answers flat items, raw feeds and no errors', async () => {
    const scope = serveAll();
    const res = await contentApp().post('newsletter_feed', {});

    expect(scope.isDone()).toBe(true);
    expect(res.body.success).toBe(true);
    expect(res.body.data.items.map((i: { id: string }) => i.id)).toEqual([
      'feed_a:101',
      'feed_a:102',
      'feed_a:103',
      'feed_b:201',
      'feed_b:202',
      'feed_c:301',
      'feed_c:302',
      'feed_d:401',
      'feed_d:402',
      'feed_d:403',
    ]);
    expect(res.body.data.items[3]).toEqual({
      id: 'feed_b:201',
      feed: 'feed_b',
      testata: 'head_b',
      mlid: '201',
      label: 'Sport ogni mattina',
    });
    expect(res.body.data).toMatchObject({
      feeds: documents,
      errors: {},
      stale: [],
      count: 10,
      skipped: { feed_a: 0, feed_b: 1, feed_c: 0, feed_d: 0 },
    });
  });

  it('fetches all four feeds when all is true, even with a feed named', async () => {
    const scope = serveAll();
    const res = await contentApp().post('newsletter_feed', { all: true, feed: 'feed_a' });
    expect(scope.isDone()).toBe(true);
    expect(Object.keys(res.body.data.feeds)).toEqual(['feed_a', 'feed_b', 'feed_c', 'feed_d']);
  });

  it('answers a single feed in the same shape', async () => {
    const scope = nock(FEEDS_HOST).get('/nl/feed_c').reply(200, feedC);
    const res = await contentApp().post('newsletter_feed', { feed: 'feed_c' });
    expect(scope.isDone()).toBe(true);
    expect(res.body.data).toEqual({
      items: [
        { id: 'feed_c:301', feed: 'feed_c', testata: 'head_c', mlid: '301', label: 'Economia e mercati' },
        { id: 'feed_c:302', feed: 'feed_c', testata: 'head_c', mlid: '302', label: 'Risparmio' },
      ],
      feeds: { feed_c: feedC },
      errors: {},
      stale: [],
      skipped: { feed_c: 0 },
      count: 2,
    });
  });

  it('serves the other feeds when one fails, and names the failed one in errors', async () => {
    nock(FEEDS_HOST)
      .get('/nl/feed_a')
      .reply(200, feedA)
      .get('/nl/feed_b')
      .reply(502)
      .get('/nl/feed_c')
      .reply(200, feedC)
      .get('/nl/feed_d')
      .reply(200, feedD);
    const res = await contentApp().post('newsletter_feed', {});
    expect(res.body.success).toBe(true);
    expect(Object.keys(res.body.data.feeds)).toEqual(['feed_a', 'feed_c', 'feed_d']);
    expect(res.body.data.errors).toEqual({
      feed_b: { reason: 'upstream_error', message: expect.any(String), upstream_status: 502 },
    });
    expect(res.body.data.items.some((i: { feed: string }) => i.feed === 'feed_b')).toBe(false);
  });

  it('gives up on a slow feed after newsletter.timeout_seconds and serves the others', async () => {
    nock(FEEDS_HOST)
      .get('/nl/feed_a')
      .reply(200, feedA)
      .get('/nl/feed_b')
      .delay(5000)
      .reply(200, feedB)
      .get('/nl/feed_c')
      .reply(200, feedC)
      .get('/nl/feed_d')
      .reply(200, feedD);
    const started = Date.now();
    const res = await contentApp().post('newsletter_feed', {});
    expect(Date.now() - started).toBeLessThan(2500);
    expect(res.body.data.errors.feed_b).toMatchObject({ reason: 'upstream_error' });
    expect(res.body.data.count).toBe(8);
  });

  it('answers upstream_error with every feed in errors when all fail', async () => {
    nock(FEEDS_HOST)
      .get(/\/nl\/feed_[a-d]$/)
      .times(4)
      .reply(500);
    const res = await contentApp().post('newsletter_feed', {});
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'upstream_error', items: [], feeds: {}, count: 0 },
    });
    expect(Object.keys(res.body.data.errors)).toEqual(['feed_a', 'feed_b', 'feed_c', 'feed_d']);
  });

  it('skips and counts entries without a usable list id', async () => {
    nock(FEEDS_HOST)
      .get('/nl/feed_a')
      .reply(200, {
        items: [{ mlid: '1', label: 'Uno' }, { label: 'senza id' }, { id: 'abc' }, 'x', { mlid: '1', label: 'doppio' }],
      });
    const res = await contentApp().post('newsletter_feed', { feed: 'feed_a' });
    expect(res.body.data.items).toEqual([
      { id: 'feed_a:1', feed: 'feed_a', testata: 'head_a', mlid: '1', label: 'Uno' },
    ]);
    expect(res.body.data.skipped).toEqual({ feed_a: 4 });
  });

  it('serves a second request within feed_cache_seconds from the cache, without a call', async () => {
    nock(FEEDS_HOST).get('/nl/feed_a').once().reply(200, feedA);
    const time = clock();
    const app = contentApp({ newsletter: { feed_cache_seconds: 60 } }, { now: time.now });
    await app.post('newsletter_feed', { feed: 'feed_a' });
    time.advance(30);
    const res = await app.post('newsletter_feed', { feed: 'feed_a' });
    expect(res.body.data).toMatchObject({ count: 3, stale: [] });
  });

  it('serves the last good copy marked stale when the feed fails after the cache time', async () => {
    nock(FEEDS_HOST).get('/nl/feed_a').reply(200, feedA).get('/nl/feed_a').reply(503);
    const time = clock();
    const app = contentApp({ newsletter: { feed_cache_seconds: 60 } }, { now: time.now });
    await app.post('newsletter_feed', { feed: 'feed_a' });
    time.advance(120);
    const res = await app.post('newsletter_feed', { feed: 'feed_a' });
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({ stale: ['feed_a'], errors: {}, count: 3, feeds: { feed_a: feedA } });
  });

  it('answers not_configured without a call when feed_base_url is empty', async () => {
    const res = await contentApp({ newsletter: { feed_base_url: '' } }).post('newsletter_feed', {});
    expect(res.body.data).toEqual({ reason: 'not_configured', key: 'newsletter.feed_base_url' });
  });

  it('refuses an unknown feed as invalid_request', async () => {
    const res = await contentApp().post('newsletter_feed', { feed: 'feed_z' });
    expect(res.body.data).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: 'feed', message: expect.any(String) }],
    });
  });
});
