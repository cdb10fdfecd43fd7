import { z } from 'zod';
import { apiError } from '../../core/errors';
import { feedCode, feedOf, headlineCode, headlineOf, LIST_ID, type Feed, type Headline } from './headlines';

/*
 * What newsletter_subscribe's request turns into: one call per headline, with that
 * headline's key and its list ids de-duplicated. Every problem is found before any call and
 * named by its path (`selections.2.mlid`), the way the front controller names schema issues.
 */

/** LIST_ID as the document states it, with the spaces the trim removes around an id. */
const LIST_ID_TEXT = `\\s*${LIST_ID.source.slice(1, -1)}\\s*`;

const listId = z
  .union([z.string().meta({ pattern: `^${LIST_ID_TEXT}$` }), z.number().int().nonnegative()])
  .transform((v) => String(v).trim())
  .pipe(z.string().min(1, { error: 'must not be empty', abort: true }).regex(LIST_ID, 'must be a numeric list id'));

/** `"101, 102"` -> ['101', '102'], each id checked and named by its position (`mlids.1`). */
const listIds = z
  .string()
  .max(2000)
  .meta({ pattern: `^${LIST_ID_TEXT}(?:,${LIST_ID_TEXT})*$` })
  .transform((value, ctx) => {
    if (value.trim() === '') {
      ctx.addIssue({ code: 'custom', message: 'must not be empty' });
      return z.NEVER;
    }
    const ids = value.split(',').map((id) => id.trim());
    ids.forEach((id, i) => {
      if (!LIST_ID.test(id))
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: id === '' ? 'must not be empty' : 'must be a numeric list id',
        });
    });
    return ids;
  });

/** The request fields that name the lists: newsletter_subscribe's schema spreads them beside `email`. */
export const selectionFields = {
  /** Preferred form: each item names a feed or a headline (paired in order), and one list id. */
  selections: z
    .array(z.object({ feed: feedCode.nullish(), testata: headlineCode.nullish(), mlid: listId }))
    .max(100)
    .nullish(),
  /** Single form: one headline and its comma-separated list ids. */
  testata: headlineCode.nullish(),
  mlids: listIds.nullish(),
};
export type Selections = z.infer<z.ZodObject<typeof selectionFields>>;

export interface HeadlinePlan {
  testata: Headline;
  feed: Feed;
  mlids: string[];
  apiKey: string;
}

interface Issue {
  path: string;
  message: string;
}

/** Groups the selections by headline, in the order they first appear; throws invalid_request naming every bad item. */
export function planSubscription(input: Selections, apiKeys: Record<Headline, string>): HeadlinePlan[] {
  const issues: Issue[] = [];
  const picked: Array<{ testata: Headline; mlid: string; path: string }> = [];

  input.selections?.forEach((item, i) => {
    const path = `selections.${i}`;
    const testata = item.testata ?? (item.feed ? headlineOf(item.feed) : undefined);
    if (!testata) issues.push({ path, message: 'feed or testata is required' });
    else if (item.feed && headlineOf(item.feed) !== testata)
      issues.push({ path: `${path}.testata`, message: `does not match feed ${item.feed} (${headlineOf(item.feed)})` });
    else picked.push({ testata, mlid: item.mlid, path: `${path}.${item.testata ? 'testata' : 'feed'}` });
  });

  if (input.testata && !input.mlids) issues.push({ path: 'mlids', message: 'is required with testata' });
  if (input.mlids && !input.testata) issues.push({ path: 'testata', message: 'is required with mlids' });
  if (input.testata && input.mlids) {
    for (const mlid of input.mlids) picked.push({ testata: input.testata, mlid, path: 'testata' });
  }
  if (picked.length === 0 && issues.length === 0) {
    issues.push(
      input.selections
        ? { path: 'selections', message: 'must hold at least one selection' }
        : { path: '', message: 'selections, or testata with mlids, is required' },
    );
  }

  const plans = new Map<Headline, HeadlinePlan>();
  for (const { testata, mlid, path } of picked) {
    const apiKey = apiKeys[testata];
    if (!apiKey) {
      if (!issues.some((issue) => issue.path === path))
        issues.push({ path, message: `no mailing-list key is configured for ${testata}` });
      continue;
    }
    const plan = plans.get(testata) ?? { testata, feed: feedOf(testata), mlids: [], apiKey };
    if (!plan.mlids.includes(mlid)) plan.mlids.push(mlid);
    plans.set(testata, plan);
  }

  if (issues.length > 0) throw apiError('invalid_request', { data: { issues } });
  return [...plans.values()];
}
