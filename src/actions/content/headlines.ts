import { z } from 'zod';

/*
 * The contract: feeds and headline codes are paired in order, and each headline has its own
 * mailing-list key (`newsletter.api_keys.<head>`).
 */
export const FEEDS = ['feed_a', 'feed_b', 'feed_c', 'feed_d'] as const;
const HEADLINES = ['head_a', 'head_b', 'head_c', 'head_d'] as const;

export const feedCode = z.enum(FEEDS);
export const headlineCode = z.enum(HEADLINES);
export type Feed = z.infer<typeof feedCode>;
export type Headline = z.infer<typeof headlineCode>;

export const headlineOf = (feed: Feed): Headline => HEADLINES[FEEDS.indexOf(feed)]!;
export const feedOf = (headline: Headline): Feed => FEEDS[HEADLINES.indexOf(headline)]!;

/**
 * A mailing-list id is digits only. The same rule decides which feed items are offered and
 * which subscriptions are accepted, so the UI never offers a list the service would refuse.
 */
export const LIST_ID = /^\d{1,20}$/;

/** A list id as the feeds and the frontend send it (string or number), or undefined. */
export function listIdOf(value: unknown): string | undefined {
  if (typeof value !== 'string' && !(typeof value === 'number' && Number.isSafeInteger(value))) return undefined;
  const id = String(value).trim();
  return LIST_ID.test(id) ? id : undefined;
}
