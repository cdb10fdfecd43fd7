import fc from 'fast-check';

/*
 * fast-check arbitraries from the JSON Schema (2020-12, OpenAPI 3.1's dialect) of a document: what
 * a client that trusts only the document would send. It follows the keywords the document uses
 * (types, enum and const, patterns and lengths, bounds, items, properties and required, anyOf and
 * oneOf, $ref into components); a keyword it does not follow (dependentRequired, not, a branch
 * matching twice in oneOf) is left to the validator the caller filters with, so no rule of the
 * document is read twice.
 */

type Schema = Record<string, unknown>;

export function arbitraryOf(document: Schema, schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (schema === true || schema === undefined) return fc.jsonValue({ maxDepth: 1 });
  const s = schema as Schema;
  if (typeof s.$ref === 'string') return arbitraryOf(document, resolve(document, s.$ref), depth);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (branches) {
    const rest = Object.fromEntries(Object.entries(s).filter(([key]) => key !== 'anyOf' && key !== 'oneOf'));
    return fc.oneof(...branches.map((branch) => arbitraryOf(document, merge(rest, branch as Schema), depth)));
  }
  if (Array.isArray(s.allOf))
    return arbitraryOf(document, (s.allOf as Schema[]).reduce(merge, { ...s, allOf: undefined }), depth);
  if (Array.isArray(s.type))
    return fc.oneof(...(s.type as string[]).map((type) => arbitraryOf(document, { ...s, type }, depth)));
  switch (s.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: bound(s.minimum, -1e6), max: bound(s.maximum, 1e6) });
    case 'number':
      return fc.double({ min: bound(s.minimum, -1e6), max: bound(s.maximum, 1e6), noNaN: true });
    case 'string':
      return stringOf(s);
    case 'array': {
      const minLength = bound(s.minItems, 0);
      return fc.array(arbitraryOf(document, s.items, depth + 1), {
        minLength,
        maxLength: Math.min(bound(s.maxItems, minLength + 3), minLength + 3),
      });
    }
    case 'object':
      return objectOf(document, s, depth);
    default:
      return s.properties ? objectOf(document, s, depth) : fc.jsonValue({ maxDepth: 1 });
  }
}

function resolve(document: Schema, ref: string): unknown {
  const path = ref
    .replace(/^#\//, '')
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'));
  return path.reduce<unknown>((node, part) => (node as Schema)[part], document);
}

/** A branch of anyOf/oneOf with the keywords beside it (`{type: object, properties, anyOf: [{required: [a]}, ...]}`). */
function merge(base: Schema, branch: Schema): Schema {
  const merged: Schema = { ...base, ...branch };
  // A property both state keeps the base's schema: the branch's narrowing is left to the validator the caller filters with.
  if (base.properties || branch.properties)
    merged.properties = { ...(branch.properties as Schema), ...(base.properties as Schema) };
  if (base.required || branch.required)
    merged.required = [...new Set([...((base.required as string[]) ?? []), ...((branch.required as string[]) ?? [])])];
  if (!merged.type && merged.properties) merged.type = 'object';
  return merged;
}

const bound = (value: unknown, otherwise: number) => (typeof value === 'number' ? value : otherwise);

function stringOf(s: Schema): fc.Arbitrary<string> {
  const minLength = bound(s.minLength, 0);
  const maxLength = bound(s.maxLength, 64);
  const fits = (text: string) => text.length >= minLength && text.length <= maxLength;
  if (typeof s.pattern === 'string') {
    // fast-check draws no lookahead: drawn without it, then held to the whole pattern.
    const whole = new RegExp(s.pattern);
    const drawn = new RegExp(s.pattern.replace(/\(\?=[^)]*\)/g, ''));
    return fc.stringMatching(drawn).filter((text) => fits(text) && whole.test(text));
  }
  if (s.format === 'email') return fc.emailAddress().filter(fits);
  if (s.format === 'date')
    return fc
      .date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
      .map((d) => d.toISOString().slice(0, 10));
  return fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 24) });
}

function objectOf(document: Schema, s: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = (s.required ?? []) as string[];
  const keys = Object.keys(properties);
  if (depth > 6) return fc.constant({});
  return fc.record(Object.fromEntries(keys.map((key) => [key, arbitraryOf(document, properties[key], depth + 1)])), {
    requiredKeys: keys.filter((key) => required.includes(key)),
  });
}
