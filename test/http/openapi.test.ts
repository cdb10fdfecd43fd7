import request from 'supertest';
import { z } from 'zod';
import { defineAction, type Action } from '../../src/actions/action';
import { actions as registeredActions } from '../../src/actions';
import { statusOf } from '../../src/core/errors';
import { COMMON_REASONS, createOpenApiDocument, type OpenApiDocument } from '../../src/http/openapi';
import { testApp, testDeps } from '../support/app';

type Json = Record<string, unknown>;

const generate = defineAction({
  name: 'code_send',
  summary: 'Sends a code.',
  request: z.object({ uid: z.string().min(1), phone: z.string().nullish(), stay: z.boolean().default(true) }),
  response: z.object({ resent: z.boolean(), expires_in: z.number().int() }),
  reasons: ['already_sent', 'region_not_allowed'],
  handler: async () => ({ data: { resent: false, expires_in: 300 } }),
});
// zod-to-openapi cannot describe z.custom: the document must still list the action.
const odd = defineAction({
  name: 'odd-action',
  request: z.object({ blob: z.custom<string>((v) => typeof v === 'string') }),
  handler: async () => ({}),
});
const fakes = [generate, odd] as Action[];

const ref = (schema: unknown): string | undefined => (schema as { $ref?: string }).$ref;
function resolve(doc: OpenApiDocument, schema: unknown): Json {
  const target = ref(schema);
  if (!target) return schema as Json;
  const name = decodeURIComponent(target.replace('#/components/schemas/', ''));
  const found = doc.components?.schemas?.[name];
  if (!found) throw new Error(`dangling $ref ${target}`);
  return found as Json;
}
const op = (doc: OpenApiDocument, path: string) => doc.paths?.[path]?.post as Json | undefined;
const jsonSchemaOf = (part: unknown): unknown =>
  ((part as Json).content as Json)['application/json'] &&
  (((part as Json).content as Json)['application/json'] as Json).schema;

/** Every `$ref` anywhere in the document points at a component that exists. */
function danglingRefs(doc: OpenApiDocument): string[] {
  const dangling: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const [, kind, name] = value.match(/^#\/components\/(\w+)\/(.+)$/) ?? [];
        const components = doc.components as Record<string, Json> | undefined;
        if (!kind || !name || !components?.[kind]?.[name]) dangling.push(value);
      } else walk(value);
    }
  };
  walk(doc);
  return dangling;
}

/** The structural checks every document must pass, whatever actions it describes. */
function expectWellFormed(doc: OpenApiDocument, actionList: readonly Action[]) {
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.info.version).toBe('1.0.0');
  expect(danglingRefs(doc)).toEqual([]);
  const operationIds = Object.values(doc.paths ?? {}).flatMap((item) =>
    Object.values(item as Json).map((o) => (o as Json).operationId),
  );
  expect(new Set(operationIds).size).toBe(operationIds.length);
  const queryEnum = (
    (op(doc, '/')?.parameters as Json[] | undefined)?.find((p) => p.name === 'action')?.schema as Json | undefined
  )?.enum;
  for (const action of actionList) {
    const operation = op(doc, `/${action.name}`);
    expect(operation).toBeDefined();
    expect(operation?.['x-action-query']).toBe(`/?action=${action.name}`);
    expect(queryEnum).toContain(action.name);
    const answer = jsonSchemaOf((operation!.responses as Json)['200']) as Json;
    const [success, failure] = (answer.oneOf as unknown[]).map((s) => resolve(doc, s));
    expect((success!.properties as Json).success).toEqual({ type: 'boolean', enum: [true] });
    expect(success!.required).toEqual(expect.arrayContaining(['success', 'error', 'data']));
    const reason = (((failure!.properties as Json).data as Json).properties as Json).reason as Json;
    // The business outcomes on 200; a reason of another status (store_unavailable, rate_limited) under its own.
    const own = [...(action.reasons ?? []), ...COMMON_REASONS];
    expect(reason.enum).toEqual(expect.arrayContaining(own.filter((r) => statusOf(r) === 200)));
    for (const other of own.filter((r) => statusOf(r) !== 200)) {
      const answer = (operation!.responses as Json)[String(statusOf(other))] as Json | undefined;
      const failure = resolve(doc, jsonSchemaOf(answer));
      expect([other, (((failure.properties as Json).data as Json).properties as Json).reason]).toEqual([
        other,
        expect.objectContaining({ enum: expect.arrayContaining([other]) }),
      ]);
    }
  }
}

describe('OpenAPI document', () => {
  const doc = createOpenApiDocument(fakes);

  it('is OpenAPI 3.1.0 with version 1.0.0, every action under both addressing styles, every answer an envelope', () => {
    expectWellFormed(doc, fakes);
  });

  it('describes the request body from the zod schema, with defaults optional', () => {
    const body = resolve(doc, jsonSchemaOf(op(doc, '/code_send')!.requestBody));
    expect(Object.keys(body.properties as Json)).toEqual(['uid', 'phone', 'stay']);
    expect(body.required).toEqual(['uid']);
  });

  it('describes the success data from the action response schema', () => {
    const answer = jsonSchemaOf((op(doc, '/code_send')!.responses as Json)['200']) as Json;
    const success = resolve(doc, (answer.oneOf as unknown[])[0]);
    const data = resolve(doc, (success.properties as Json).data);
    expect(data.properties).toEqual({ resent: { type: 'boolean' }, expires_in: { type: 'integer' } });
  });

  it('lists exactly the declared reasons plus the common ones', () => {
    const failure = doc.components?.schemas?.['code_send.Failure'] as Json;
    const reason = (((failure.properties as Json).data as Json).properties as Json).reason as Json;
    expect(reason.enum).toEqual(['already_sent', 'invalid_request', 'region_not_allowed', 'upstream_error']);
  });

  it('still describes an action whose schema zod-to-openapi cannot convert', () => {
    const body = resolve(doc, jsonSchemaOf(op(doc, '/odd-action')!.requestBody));
    expect(body).toMatchObject({ type: 'object', required: ['blob'] });
  });

  it('offers the query style as POST / with a required action parameter and any action body', () => {
    const query = op(doc, '/')!;
    expect(query.parameters).toEqual([
      expect.objectContaining({
        name: 'action',
        in: 'query',
        required: true,
        schema: { type: 'string', enum: ['code_send', 'odd-action'] },
      }),
    ]);
    expect((jsonSchemaOf(query.requestBody) as Json).anyOf).toEqual([
      { $ref: '#/components/schemas/code_send.Request' },
      { $ref: '#/components/schemas/odd-action.Request' },
    ]);
  });

  it('lists each transport status under every operation, each with its reasons from the catalogue', () => {
    for (const path of ['/code_send', '/']) {
      const responses = op(doc, path)!.responses as Json;
      expect([path, Object.keys(responses)]).toEqual([path, ['200', '400', '404', '405', '413', '415', '429', '500']]);
      expect(jsonSchemaOf(responses['429'])).toEqual({ $ref: '#/components/schemas/Failure.429' });
      expect(Object.keys((responses['429'] as Json).headers as Json)).toEqual(['Retry-After']);
      expect(((responses['405'] as Json).headers as Json).Allow).toMatchObject({ schema: { enum: ['POST'] } });
    }
    const reason = (id: string) =>
      (((doc.components!.schemas![id] as Json).properties as Json).data as Json).properties as Json;
    expect(reason('Failure.400').reason).toMatchObject({ enum: ['malformed_json'] });
    expect(reason('Failure.404').reason).toMatchObject({ enum: ['unknown_action'] });
  });

  it('lists 503 store_unavailable with Retry-After where the action touches the store', () => {
    const store = defineAction({ ...generate, name: 'code_check', reasons: ['invalid', 'store_unavailable'] });
    const responses = op(createOpenApiDocument([generate, store]), '/code_check')!.responses as Json;
    expect(Object.keys(responses)).toContain('503');
    expect(Object.keys((responses['503'] as Json).headers as Json)).toEqual(['Retry-After']);
    expect(Object.keys(op(doc, '/code_send')!.responses as Json)).not.toContain('503');
  });

  it('is the same document every time it is generated', () => {
    expect(JSON.stringify(createOpenApiDocument(fakes))).toBe(JSON.stringify(doc));
  });

  it('describes every registered action of the service', () => {
    expect(registeredActions.length).toBeGreaterThan(0);
    expectWellFormed(createOpenApiDocument(), registeredActions);
  });
});

describe('GET /openapi.json', () => {
  it('serves the document of the app actions', async () => {
    const deps = testDeps();
    const app = testApp(deps, { actions: new Map(fakes.map((a) => [a.name, a])) });
    const res = await request(app.callback()).get('/openapi.json');
    await deps.close();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(createOpenApiDocument(fakes))));
  });
});
