import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import fc from 'fast-check';
import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { arbitraryOf } from '../support/schema-arbitrary';
import { testConfig } from '../support/app';

/*
 * The document as a client that trusts only it would read it (issue 47): requests are built from
 * each operation's request schema in docs/openapi.json (fast-check, test/support/schema-arbitrary.ts),
 * kept when the document's own schema (Ajv, JSON Schema 2020-12) calls them valid, and sent to the
 * service on the sandbox. At least 95 % of them must get past `invalid_request` (reach the
 * action's own logic); and each one turned invalid by the document (a required field left out, a
 * field of the wrong type) must be refused. Rate limits are off and callers may choose a channel
 * (sms.channel_choice): a limit, or a setting the document names, is not what is measured.
 */

type Json = Record<string, unknown>;

const DOCUMENT = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as Json;
const PER_OPERATION = 20;
const SEED = 47;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
ajv.addSchema(DOCUMENT, 'openapi.json');

interface Operation {
  action: string;
  schema: Json;
  validate: ValidateFunction;
}

const operations: Operation[] = Object.entries(DOCUMENT.paths as Record<string, Record<string, Json>>)
  .filter(([, item]) => item.post?.['x-action-query'] && item.post.requestBody)
  .map(([path, item]) => {
    const location = pointer('paths', path, 'post', 'requestBody', 'content', 'application/json', 'schema');
    const schema = ((((item.post!.requestBody as Json).content as Json)['application/json'] as Json).schema ??
      {}) as Json;
    return { action: path.slice(1), schema, validate: ajv.compile({ $ref: `openapi.json#/${location}` }) };
  });

const drawnFor = new Map<Operation, Json[]>();

/** Requests the document calls valid for `operation`, the same ones on every run. */
function validRequests(operation: Operation): Json[] {
  const known = drawnFor.get(operation);
  if (known) return known;
  const drawn = fc.sample(arbitraryOf(DOCUMENT, operation.schema), { numRuns: PER_OPERATION * 2, seed: SEED });
  const valid = drawn.filter((body) => operation.validate(body)).slice(0, PER_OPERATION) as Json[];
  drawnFor.set(operation, valid);
  return valid;
}

/** What a wrong type for a value is: an object for a scalar, a number for anything else. */
const wrongType = (value: unknown): unknown => (typeof value === 'object' && value !== null ? 12345 : { wrong: 1 });

/** From each valid request: one without each of its fields, one with each field of the wrong type; those the document refuses. */
function invalidRequests(operation: Operation, valid: Json[]): Json[] {
  const variants = valid.flatMap((body) =>
    Object.keys(body).flatMap((key) => {
      const { [key]: _left, ...without } = body;
      return [without, { ...body, [key]: wrongType(body[key]) }];
    }),
  );
  return variants.filter((body) => !operation.validate(body)).slice(0, PER_OPERATION);
}

/** The string rules a field's schema states, through `$ref`s and the branches of `anyOf`/`oneOf` (a nullable field's). */
interface Facets {
  pattern?: string;
  maxLength?: number;
  minLength?: number;
  enum?: unknown[];
}
function facetsOf(schema: Json | undefined): Facets {
  if (!schema) return {};
  const ref = typeof schema.$ref === 'string' ? (at(DOCUMENT, schema.$ref.slice(1)) as Json) : undefined;
  const branches = [...((schema.anyOf ?? []) as Json[]), ...((schema.oneOf ?? []) as Json[])];
  const own: Facets = {
    ...(typeof schema.pattern === 'string' ? { pattern: schema.pattern } : {}),
    ...(typeof schema.maxLength === 'number' ? { maxLength: schema.maxLength } : {}),
    ...(typeof schema.minLength === 'number' ? { minLength: schema.minLength } : {}),
    ...(Array.isArray(schema.enum) ? { enum: schema.enum as unknown[] } : {}),
  };
  return Object.assign({}, ...branches.map(facetsOf), facetsOf(ref), own) as Facets;
}
const at = (node: unknown, pointer: string): unknown =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((value, key) => (value as Json | undefined)?.[key], node);

/** The either/or rules of a request schema: each `anyOf` (at the top or in an `allOf`), as the fields each branch requires. */
function eitherOr(schema: Json): string[][][] {
  const resolved = typeof schema.$ref === 'string' ? (at(DOCUMENT, schema.$ref.slice(1)) as Json) : schema;
  const groups = [resolved, ...((resolved.allOf ?? []) as Json[])].flatMap((s) =>
    [s.anyOf, s.oneOf].filter(Array.isArray),
  ) as Json[][];
  return groups.map((branches) => branches.map((branch) => (branch.required ?? []) as string[]));
}

const KINDS = ['pattern', 'enum', 'too_long', 'too_short', 'neither', 'both'] as const;
type Kind = (typeof KINDS)[number];

/**
 * Beyond a dropped field or a wrong type: from each valid request, each field's pattern broken,
 * a value outside its enum, a text one longer than its maxLength or shorter than its minLength,
 * and each either/or rule with neither side and with both (the other side's value taken from
 * another valid request). Each variant with what the document says of it.
 */
function ruleVariants(
  operation: Operation,
  valid: Json[],
): Array<{ kind: Kind; base: Json; body: Json; valid: boolean }> {
  const schema = (
    typeof operation.schema.$ref === 'string' ? at(DOCUMENT, operation.schema.$ref.slice(1)) : operation.schema
  ) as Json;
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const variants: Array<{ kind: Kind; base: Json; body: Json }> = [];
  for (const body of valid) {
    for (const [key, value] of Object.entries(body)) {
      const facets = facetsOf(properties[key]);
      if (typeof value !== 'string') continue;
      if (facets.pattern) variants.push({ kind: 'pattern', base: body, body: { ...body, [key]: `${value} !¿` } });
      if (facets.enum) variants.push({ kind: 'enum', base: body, body: { ...body, [key]: 'not_one_of_them' } });
      if (facets.maxLength !== undefined)
        variants.push({
          kind: 'too_long',
          base: body,
          body: { ...body, [key]: 'a'.repeat(facets.maxLength + 1) },
        });
      if (facets.minLength)
        variants.push({
          kind: 'too_short',
          base: body,
          body: { ...body, [key]: value.slice(0, facets.minLength - 1) },
        });
    }
    for (const branches of eitherOr(operation.schema)) {
      const fields = [...new Set(branches.flat())];
      variants.push({
        kind: 'neither',
        base: body,
        body: Object.fromEntries(Object.entries(body).filter(([key]) => !fields.includes(key))),
      });
      const both = { ...body };
      for (const field of fields) both[field] ??= valid.find((other) => other[field] !== undefined)?.[field];
      if (fields.every((field) => both[field] !== undefined)) variants.push({ kind: 'both', base: body, body: both });
    }
  }
  return variants.map((variant) => ({ ...variant, valid: operation.validate(variant.body) }));
}

describe('requests built from docs/openapi.json', () => {
  let service: Service;
  let lastIssues: unknown;
  const reasonOf = async (action: string, body: unknown): Promise<string> => {
    const res = await fetch(`${service.url}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { data?: { reason?: string; issues?: unknown } | null };
    lastIssues = answer.data?.issues;
    return answer.data?.reason ?? 'ok';
  };

  beforeAll(async () => {
    const silent = pino({ level: 'silent' });
    service = await startService(
      testConfig({
        sandbox: { enabled: true },
        rate_limits: { enabled: false },
        sms: { channel_choice: true },
        // Hundreds of requests, many refused before their body is read (the socket then closed): on a busy
        // machine the closed sockets outlive the next request's and the per-client cap resets it.
        server: { host: '127.0.0.1', port: 0, max_connections_per_client: 0 },
      }),
      { log: silent, otpLog: silent },
    );
  });
  afterAll(() => service?.close());

  it('has a request schema for every action', () => {
    expect(operations.length).toBeGreaterThan(20);
  });

  it('gets at least 95 % of the requests it calls valid past invalid_request', async () => {
    const refused: Record<string, { sent: number; invalid: number; example?: unknown }> = {};
    let sent = 0;
    let invalid = 0;
    for (const operation of operations) {
      const row = (refused[operation.action] = { sent: 0, invalid: 0 } as (typeof refused)[string]);
      for (const body of validRequests(operation)) {
        const reason = await reasonOf(operation.action, body);
        row.sent += 1;
        if (reason === 'invalid_request') {
          row.invalid += 1;
          row.example ??= { body, issues: lastIssues };
        }
      }
      sent += row.sent;
      invalid += row.invalid;
    }
    const accepted = (sent - invalid) / sent;
    const worst = Object.entries(refused)
      .filter(([, row]) => row.invalid > 0)
      .sort(([, a], [, b]) => b.invalid / b.sent - a.invalid / a.sent);
    process.stdout.write(
      `accepted ${(accepted * 100).toFixed(1)} % of ${sent}\n${worst.map(([a, r]) => `${a} ${r.invalid}/${r.sent} ${JSON.stringify(r.example)}`).join('\n')}\n`,
    );
    expect(sent).toBeGreaterThan(operations.length * PER_OPERATION * 0.5);
    expect(accepted).toBeGreaterThanOrEqual(0.95);
  }, 120_000);

  it('refuses every request it calls invalid', async () => {
    const wrong: unknown[] = [];
    let sent = 0;
    for (const operation of operations) {
      for (const body of invalidRequests(operation, validRequests(operation))) {
        sent += 1;
        if ((await reasonOf(operation.action, body)) !== 'invalid_request')
          wrong.push({ action: operation.action, body });
      }
    }
    expect(sent).toBeGreaterThan(operations.length * 5);
    expect(wrong.slice(0, 3)).toEqual([]);
  }, 60_000);

  it('refuses each request that breaks a rule the document states, and takes both sides of an either/or it allows', async () => {
    const counted = Object.fromEntries(KINDS.map((kind) => [kind, { refused: 0, allowed: 0 }])) as Record<
      Kind,
      { refused: number; allowed: number }
    >;
    const wrong: unknown[] = [];
    for (const operation of operations) {
      const seen = new Set<string>();
      for (const { kind, base, body, valid } of ruleVariants(operation, validRequests(operation))) {
        const key = `${kind} ${valid} ${JSON.stringify(body)}`;
        // A few of each kind per operation: the rules are the same for every request.
        if (seen.has(key) || [...seen].filter((k) => k.startsWith(`${kind} ${valid} `)).length >= 5) continue;
        seen.add(key);
        const reason = await reasonOf(operation.action, body);
        if (valid) {
          // What the document allows is held to what its base request got: a rule no schema states (named
          // in the operation's description) may refuse both, as it refuses a few requests of the 95 % test.
          counted[kind].allowed += 1;
          const issues = lastIssues;
          if (reason === 'invalid_request' && (await reasonOf(operation.action, base)) !== 'invalid_request')
            wrong.push({ action: operation.action, kind, body, issues });
        } else {
          // Refused: invalid_request, or a refusal that comes first (passkeys_disabled where passkeys are off).
          counted[kind].refused += 1;
          if (reason === 'ok') wrong.push({ action: operation.action, kind, body, reason });
        }
      }
    }
    process.stdout.write(`rule variants ${JSON.stringify(counted)}\n`);
    expect(
      Math.min(...(['pattern', 'enum', 'too_long', 'too_short', 'neither'] as const).map((k) => counted[k].refused)),
    ).toBeGreaterThan(3);
    expect(wrong.slice(0, 5)).toEqual([]);
  }, 120_000);
});
