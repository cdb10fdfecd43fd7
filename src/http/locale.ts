import type { Context } from 'koa';
import { z } from 'zod';
import type { Action } from '../actions/action';

/*
 * The language a request is answered in (code messages, error texts): the `locale` field of the
 * actions that send a code, else the best of `Accept-Language` (Koa's acceptsLanguages, which
 * is `negotiator`), else `mail.default_locale`. A locale the service has no templates for falls
 * through to the next source. Resolved on first need and kept on `ctx.state`: a request that
 * sends nothing and fails nowhere never parses the header.
 */

export type LocaleOf = (ctx: Context) => string;

/** Actions whose request schema has a `locale` field: only their body names the locale. */
export function actionsWithLocaleField(actions: Iterable<Action>): ReadonlySet<string> {
  const names = new Set<string>();
  for (const action of actions)
    if (action.request instanceof z.ZodObject && 'locale' in action.request.shape) names.add(action.name);
  return names;
}

export function createLocaleResolver(
  locales: readonly string[],
  fallback: string,
  fieldActions: ReadonlySet<string>,
): LocaleOf {
  const known = new Set(locales);
  // The default first: `Accept-Language: *` (or a tie) picks it.
  const offered = [fallback, ...locales.filter((l) => l !== fallback)];

  /** A requested tag as we have it: `en`, `EN`, `en-GB` -> `en` when only `en` exists. */
  const fromField = (value: unknown): string | undefined => {
    if (typeof value !== 'string' || value === '') return undefined;
    const tag = value.trim().toLowerCase().replace(/_/g, '-');
    if (known.has(tag)) return tag;
    const language = tag.split('-')[0]!;
    return known.has(language) ? language : undefined;
  };

  return (ctx) => {
    const resolved = ctx.state.locale;
    if (typeof resolved === 'string') return resolved;
    const body = fieldActions.has(ctx.state.action as string)
      ? (ctx.request.body as { locale?: unknown } | undefined)
      : undefined;
    let locale = fromField(body?.locale);
    if (locale === undefined && ctx.get('accept-language') !== '') locale = ctx.acceptsLanguages(offered) || undefined;
    ctx.state.locale = locale ?? fallback;
    return ctx.state.locale as string;
  };
}
