import { z } from 'zod';
import { feedCode, headlineCode, headlineOf, listIdOf, type Feed } from './headlines';

/** The contract's newsletter feed item (docs/contract.md#shapes). */
export const feedItem = z.object({
  id: z.string(),
  feed: feedCode,
  testata: headlineCode,
  mlid: z.string(),
  label: z.string(),
});
export type FeedItem = z.infer<typeof feedItem>;

const labelOf = (entry: Record<string, unknown>): string | undefined =>
  [entry.label, entry.name, entry.title].find((v): v is string => typeof v === 'string' && v.trim() !== '')?.trim();

/**
 * A feed's entries as UI items. The list id is `mlid`, else `id` (digits, as subscriptions
 * require); the label is `label`, `name` or `title`, else the list id. Entries without a usable
 * id, and repeats of an id already seen in the feed, are skipped and counted.
 */
export function toFeedItems(feed: Feed, entries: readonly unknown[]): { items: FeedItem[]; skipped: number } {
  const testata = headlineOf(feed);
  const items: FeedItem[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) continue;
    const fields = entry as Record<string, unknown>;
    const mlid = listIdOf(fields.mlid) ?? listIdOf(fields.id);
    if (!mlid || seen.has(mlid)) continue;
    seen.add(mlid);
    items.push({ id: `${feed}:${mlid}`, feed, testata, mlid, label: labelOf(fields) ?? mlid });
  }
  return { items, skipped: entries.length - items.length };
}
