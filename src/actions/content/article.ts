import { z } from 'zod';

/** The contract's recommended article (docs/contract.md#shapes): five fields always, the optional ones only when the upstream sent them. */
export const OPTIONAL_FIELDS = [
  'author',
  'publishtime',
  'categoria',
  'tassonomia',
  'keyword',
  'kw-classification',
  'kw-taxonomy',
  'kw-category',
  'kw-sentiment',
  'category0',
  'category1',
  'createtime',
] as const;

export const recommendedArticle = z
  .object({ title: z.string(), url: z.string(), thumbnail: z.string(), click_url: z.string(), description: z.string() })
  .extend(
    Object.fromEntries(OPTIONAL_FIELDS.map((key) => [key, z.unknown().optional()])) as Record<
      (typeof OPTIONAL_FIELDS)[number],
      z.ZodOptional<z.ZodUnknown>
    >,
  );
export type RecommendedArticle = z.infer<typeof recommendedArticle>;

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : undefined;

const ELLIPSIS = '…';

/** Whitespace folded; when longer than `max`, cut at the last word that fits and ended with an ellipsis, `max` characters at most. */
export function truncate(value: string, max: number): string {
  const clean = value.replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  const room = clean.slice(0, max - ELLIPSIS.length);
  // The cut falls between words when the next character is a space; else back up to the last space.
  const end = clean[room.length] === ' ' ? room.length : room.lastIndexOf(' ');
  const head = end > 0 ? room.slice(0, end) : room;
  return `${head.replace(/[\s.,;:!?\-–—]+$/, '')}${ELLIPSIS}`;
}

/**
 * One widget item as the contract's article: title from og-title (else title), thumbnail (else
 * og-image), click_url (else url), description from og-description (else description). Items
 * without a url are no article.
 *
 * The widget puts the page's `og-*` tags under `metadata`, but some items carry them on the
 * item itself: an og-* field counts wherever it is, and always beats the plain field (an og-title
 * on the item beats a title in metadata). When both places hold one, `metadata` wins: the contract
 * names "the og-title metadata" as the source, and the optional fields below also prefer
 * `metadata`, so a copy on the item is the fallback in both cases.
 */
export function toArticle(item: Tree, descriptionLength: number): RecommendedArticle | undefined {
  const meta = isTree(item.metadata) ? item.metadata : {};
  const og = (name: 'og-title' | 'og-description' | 'og-image' | 'og-url') => text(meta[name]) ?? text(item[name]);
  const url = text(item.url) ?? og('og-url');
  if (!url) return undefined;
  const article: RecommendedArticle = {
    title: og('og-title') ?? text(item.title) ?? text(meta.title) ?? '',
    url,
    thumbnail: text(item.thumbnail) ?? og('og-image') ?? text(meta.thumbnail) ?? '',
    click_url: text(item.click_url) ?? url,
    description: truncate(
      og('og-description') ?? text(meta.description) ?? text(item.description) ?? '',
      descriptionLength,
    ),
  };
  for (const key of OPTIONAL_FIELDS) {
    const value = meta[key] ?? item[key];
    if (value !== undefined && value !== null) article[key] = value;
  }
  return article;
}
