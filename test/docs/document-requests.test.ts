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
        server: { host: '127.0.0.1', port: 0 },
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
});
