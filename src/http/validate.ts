import { z } from 'zod';
import { apiError } from '../core/errors';
import { issueMap } from '../core/issue-texts';
import { textLocale } from '../core/text-locale';

const MAX_DEPTH = 16;
const unsafeKeys = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * JSON.parse keeps `__proto__` as an own key, harmless until something merges or assigns it.
 * Refuse such keys, and bodies nested deeper than any action needs, before any schema sees them.
 */
export function checkBodyShape(body: unknown): void {
  const stack: Array<[unknown, number]> = [[body, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_DEPTH) {
      throw apiError('invalid_request', {
        data: { issues: [{ path: '', message: `nested deeper than ${MAX_DEPTH} levels` }] },
      });
    }
    for (const key of Object.keys(node)) {
      if (unsafeKeys.has(key)) {
        throw apiError('invalid_request', { data: { issues: [{ path: key, message: 'key not allowed' }] } });
      }
      stack.push([(node as Record<string, unknown>)[key], depth + 1]);
    }
  }
}

/** Parsed in the answer's language through the one catalogue (src/core/issue-texts.ts); texts a schema names itself are translated with the envelope. */
const params = { it: { error: issueMap('it') }, en: { error: issueMap('en') } };

export function parseRequest<S extends z.ZodType>(schema: S, body: unknown, locale?: string): z.infer<S> {
  const result = schema.safeParse(body, params[textLocale(locale)]);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  throw apiError('invalid_request', { data: { issues } });
}
