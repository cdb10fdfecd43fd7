import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { Config } from '../core/config/schema';
import { apiError, ApiError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { CallContext } from '../core/context';
import { createUpstream, type ClientOptions } from './http';

/*
 * The newsletter feed service: one JSON document per feed id, at
 * `{feed_base_url}/{feed_id}`, or wherever `{feed}` stands when the base URL holds that placeholder
 * (`https://cdn.example.com/nl/{feed}.json`).
 *
 * Each successful answer is cached for `newsletter.feed_cache_seconds`; past that it is fetched
 * again, and when that fetch fails the last good copy is served marked stale, for at most
 * `newsletter.feed_stale_seconds`. Concurrent reads of one feed share one fetch.
 */

export const feedUrl = (base: string, feed: string): string =>
  base.includes('{feed}')
    ? base.replaceAll('{feed}', encodeURIComponent(feed))
    : `${base.replace(/\/+$/, '')}/${encodeURIComponent(feed)}`;

/** Keys that may hold the list in an object-shaped feed, in the order they are tried. */
const LIST_KEYS = ['items', 'newsletters', 'lists', 'data', 'results', 'entries'] as const;

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The list inside a feed: the document itself, a known key (one level deep at most), or its only array. */
export function feedList(body: unknown, depth = 0): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (!isTree(body)) return undefined;
  for (const key of LIST_KEYS) {
    const value = body[key];
    if (Array.isArray(value)) return value;
    if (depth === 0 && isTree(value)) {
      const inner = feedList(value, 1);
      if (inner) return inner;
    }
  }
  const arrays = Object.values(body).filter(Array.isArray);
  return arrays.length === 1 ? arrays[0] : undefined;
}

/** A feed document with a list in it; anything else is a bad reply (an upstream error, never cached). */
const feedReply = z.unknown().transform((content, ctx) => {
  const entries = feedList(content);
  if (!entries) {
    ctx.addIssue({ code: 'custom', message: 'no list of newsletters found in the feed' });
    return z.NEVER;
  }
  return { content, entries };
});

interface FeedCopy {
  /** The document as the feed service sent it. */
  content: unknown;
  /** The list found in it, items unchecked. */
  entries: unknown[];
  /** deps.now() when it was fetched. */
  fetchedAt: number;
}

export interface FeedRead extends FeedCopy {
  /** fresh: fetched now; cached: a copy younger than the cache time; stale: an older copy served because the fetch failed. */
  state: 'fresh' | 'cached' | 'stale';
  /** Why a stale copy was served. */
  error?: ApiError;
}

export interface FeedsClient {
  /** One feed, from the cache or the feed service; throws ApiError `upstream_error` when neither has it. */
  read(ctx: CallContext, feed: string): Promise<FeedRead>;
}

export function createFeedsClient(
  config: Config,
  log: Logger,
  { now = Date.now, observe, declare }: ClientOptions & { now?: () => number } = {},
): FeedsClient {
  const {
    feed_base_url: base,
    feed_cache_seconds: freshSeconds,
    feed_stale_seconds: staleSeconds,
    timeout_seconds,
  } = config.newsletter;
  const upstream = createUpstream({
    name: 'feeds',
    label: 'feed newsletter',
    timeoutMs: timeout_seconds * 1000,
    log,
    observe,
    declare,
    endpoints: ['feed'],
  });
  // The LRU's own TTL is the outer bound of staleness; freshness is judged from fetchedAt.
  const copies = new LRUCache<string, FeedCopy>({
    max: 64,
    ttl: Math.max(freshSeconds, staleSeconds) * 1000,
    perf: { now },
    // Read the clock on every check, so a test that moves deps.now is seen at once.
    ttlResolution: 0,
  });
  const inFlight = new Map<string, Promise<FeedCopy>>();

  // A fetch in flight is shared by every request that asks meanwhile: it is logged under the first one's id.
  const fetchFeed = async (ctx: CallContext, feed: string): Promise<FeedCopy> => {
    if (!base)
      throw apiError('not_configured', {
        params: { key: 'newsletter.feed_base_url' },
        data: { key: 'newsletter.feed_base_url' },
      });
    const { data } = await upstream.call(ctx, {
      endpoint: 'feed',
      method: 'GET',
      url: feedUrl(base, feed),
      reply: feedReply,
    });
    const copy = { ...data, fetchedAt: now() };
    copies.set(feed, copy);
    return copy;
  };

  return {
    async read(ctx, feed) {
      const kept = copies.get(feed);
      if (kept && now() - kept.fetchedAt < freshSeconds * 1000) return { ...kept, state: 'cached' };
      let pending = inFlight.get(feed);
      if (!pending) {
        pending = fetchFeed(ctx, feed).finally(() => inFlight.delete(feed));
        inFlight.set(feed, pending);
      }
      try {
        return { ...(await pending), state: 'fresh' };
      } catch (err) {
        if (!kept || !(err instanceof ApiError) || err.reason !== 'upstream_error') throw err;
        log.warn(
          { feed, age_seconds: Math.round((now() - kept.fetchedAt) / 1000) },
          'feed unavailable: serving the last good copy',
        );
        return { ...kept, state: 'stale', error: err };
      }
    },
  };
}
