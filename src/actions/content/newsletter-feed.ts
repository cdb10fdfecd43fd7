import { z } from 'zod';
import type { CallContext } from '../../core/context';
import type { FeedRead, FeedsClient } from '../../clients/feeds';
import { apiError, type ApiError, isApiError } from '../../core/errors';
import { defineAction } from '../action';
import { feedItem, toFeedItems } from './feed-items';
import { FEEDS, feedCode, type Feed } from './headlines';

const newsletterFeedRequest = z.object({
  /** True, or no `feed`: all four feeds. */
  all: z.boolean().nullish(),
  feed: feedCode.nullish(),
});

const feedError = z.object({ reason: z.string(), message: z.string(), upstream_status: z.number().int().optional() });

const newsletterFeedResponse = z.object({
  items: z.array(feedItem),
  /** The served feeds' documents as the feed service sent them. */
  feeds: z.record(z.string(), z.unknown()),
  /** The feeds that could not be served, and why. */
  errors: z.record(z.string(), feedError),
  /** Feeds served from their last good copy because the feed service failed. */
  stale: z.array(feedCode),
  /** Per served feed, entries left out for lack of a usable list id. */
  skipped: z.record(z.string(), z.number().int()),
  count: z.number().int(),
});
type NewsletterFeedData = z.infer<typeof newsletterFeedResponse>;

type Outcome = { feed: Feed; read: FeedRead } | { feed: Feed; error: ApiError };

async function readFeed(ctx: CallContext, feeds: FeedsClient, feed: Feed): Promise<Outcome> {
  try {
    return { feed, read: await feeds.read(ctx, feed) };
  } catch (err) {
    if (!isApiError(err)) throw err;
    return { feed, error: err };
  }
}

function collect(outcomes: Outcome[]): NewsletterFeedData {
  const data: NewsletterFeedData = { items: [], feeds: {}, errors: {}, stale: [], skipped: {}, count: 0 };
  for (const outcome of outcomes) {
    const { feed } = outcome;
    if ('error' in outcome) {
      const status = outcome.error.data.upstream_status;
      data.errors[feed] = {
        reason: outcome.error.reason,
        message: outcome.error.message,
        ...(typeof status === 'number' ? { upstream_status: status } : {}),
      };
      continue;
    }
    const { items, skipped } = toFeedItems(feed, outcome.read.entries);
    data.items.push(...items);
    data.feeds[feed] = outcome.read.content;
    data.skipped[feed] = skipped;
    if (outcome.read.state === 'stale') data.stale.push(feed);
  }
  data.count = data.items.length;
  return data;
}

export const newsletterFeed = defineAction({
  name: 'newsletter_feed',
  summary: 'The newsletter lists of one feed or of all four, flat and ready for the UI.',
  request: newsletterFeedRequest,
  response: newsletterFeedResponse,
  reasons: ['not_configured'],
  async handler(input, ctx) {
    const { deps } = ctx;
    if (!deps.config.newsletter.feed_base_url) {
      throw apiError('not_configured', {
        params: { key: 'newsletter.feed_base_url' },
        data: { key: 'newsletter.feed_base_url' },
      });
    }
    const wanted = input.all || !input.feed ? FEEDS : [input.feed];
    const data = collect(await Promise.all(wanted.map((feed) => readFeed(ctx, deps.feeds, feed))));
    // One feed served is a useful page; none is a failure, with every feed's error.
    if (Object.keys(data.feeds).length === 0)
      throw apiError('upstream_error', { params: { service: 'feed newsletter' }, data });
    return { data };
  },
});
