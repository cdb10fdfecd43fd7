import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { createFeedsClient, feedList, feedUrl } from '../../src/clients/feeds';
import { isApiError } from '../../src/core/errors';
import feedA from '../../src/sandbox/fixtures/feeds/feed_a.json';
import feedB from '../../src/sandbox/fixtures/feeds/feed_b.json';
import feedC from '../../src/sandbox/fixtures/feeds/feed_c.json';
import feedD from '../../src/sandbox/fixtures/feeds/feed_d.json';
import { testConfig } from '../support/app';
import { useNock } from '../support/nock';

const HOST = 'http://feeds.test';
const log = pino({ level: 'silent' });

function setup(newsletter: Record<string, unknown> = {}) {
  let clock = 1_700_000_000_000;
  const config = testConfig({
    newsletter: { feed_base_url: `${HOST}/nl`, feed_cache_seconds: 60, feed_stale_seconds: 3600, ...newsletter },
  });
  const client = createFeedsClient(config, log, { now: () => clock });
  return { client, advance: (seconds: number) => (clock += seconds * 1000) };
}

useNock();

describe('feed URL', () => {
  it('appends the feed id to the base URL', () => {
    expect(feedUrl('https://cdn.example.com/nl/', 'feed_a')).toBe('https://cdn.example.com/nl/feed_a');
  });

  it('puts the feed id where the base URL holds {feed}', () => {
    expect(feedUrl('https://cdn.example.com/nl/{feed}.json?v=2', 'feed_b')).toBe(
      'https://cdn.example.com/nl/feed_b.json?v=2',
    );
  });
});

describe('feed list', () => {
  it.each([
    ['a JSON array', feedA, 3],
    ['an object with items', feedB, 3],
    ['an object with newsletters', feedC, 2],
    ['data.lists one level down', feedD, 3],
    ['the only array of an object', { updated: 'x', whatever: [{ id: 1 }] }, 1],
  ])('finds the list in %s', (_shape, document, length) => {
    expect(feedList(document)).toHaveLength(length);
  });

  it('finds no list in an object without one, or with two unknown arrays', () => {
    expect(feedList({ title: 'x' })).toBeUndefined();
    expect(feedList({ a: [], b: [] })).toBeUndefined();
    expect(feedList('<html>')).toBeUndefined();
  });
});

describe('feeds client', () => {
  it('fetches GET {feed_base_url}/{feed} and returns the document and its list', async () => {
    const scope = nock(HOST).get('/nl/feed_b').reply(200, feedB);
    const read = await setup().client.read(testCtx, 'feed_b');
    expect(read).toMatchObject({ state: 'fresh', content: feedB, entries: feedB.items });
    expect(scope.isDone()).toBe(true);
  });

  it('serves a cached copy within feed_cache_seconds without a second call', async () => {
    nock(HOST).get('/nl/feed_a').once().reply(200, feedA);
    const { client, advance } = setup();
    await client.read(testCtx, 'feed_a');
    advance(59);
    await expect(client.read(testCtx, 'feed_a')).resolves.toMatchObject({ state: 'cached', content: feedA });
  });

  it('fetches again once feed_cache_seconds have passed', async () => {
    const scope = nock(HOST).get('/nl/feed_a').twice().reply(200, feedA);
    const { client, advance } = setup();
    await client.read(testCtx, 'feed_a');
    advance(60);
    await expect(client.read(testCtx, 'feed_a')).resolves.toMatchObject({ state: 'fresh' });
    expect(scope.isDone()).toBe(true);
  });

  it('serves the last good copy marked stale when the feed service fails', async () => {
    nock(HOST).get('/nl/feed_a').reply(200, feedA).get('/nl/feed_a').reply(503);
    const { client, advance } = setup();
    await client.read(testCtx, 'feed_a');
    advance(600);
    const read = await client.read(testCtx, 'feed_a');
    expect(read).toMatchObject({ state: 'stale', content: feedA });
    expect(read.error?.reason).toBe('upstream_error');
  });

  it('drops the last good copy after feed_stale_seconds', async () => {
    nock(HOST).get('/nl/feed_a').reply(200, feedA).get('/nl/feed_a').reply(503);
    const { client, advance } = setup();
    await client.read(testCtx, 'feed_a');
    advance(3601);
    const err = await client.read(testCtx, 'feed_a').catch((e: unknown) => e);
    expect(isApiError(err) && err.reason).toBe('upstream_error');
  });

  it('refuses a document holding no list as upstream_error and does not cache it', async () => {
    const scope = nock(HOST).get('/nl/feed_a').reply(200, { title: 'no list' }).get('/nl/feed_a').reply(200, feedA);
    const { client } = setup();
    const err = await client.read(testCtx, 'feed_a').catch((e: unknown) => e);
    expect(isApiError(err) && err.reason).toBe('upstream_error');
    await expect(client.read(testCtx, 'feed_a')).resolves.toMatchObject({ state: 'fresh' });
    expect(scope.isDone()).toBe(true);
  });

  it('shares one call among concurrent reads of a feed', async () => {
    nock(HOST).get('/nl/feed_c').once().delay(50).reply(200, feedC);
    const { client } = setup();
    const reads = await Promise.all([
      client.read(testCtx, 'feed_c'),
      client.read(testCtx, 'feed_c'),
      client.read(testCtx, 'feed_c'),
    ]);
    expect(reads.map((r) => r.entries.length)).toEqual([2, 2, 2]);
  });
});
