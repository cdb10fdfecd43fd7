import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import pino from 'pino';
import request from 'supertest';
import { STEP } from '../../machines';
import { sandboxClient, scenarios } from '../../scripts/record-journeys';
import { startService, type Service } from '../../src/service';
import { testApp, testConfig, testDeps } from '../support/app';
import { forwardingProxy } from '../support/forwarding-proxy';

/*
 * The document against what the service answers. A recording proxy stands in front of the
 * service on the sandbox; every journey of scripts/record-journeys.ts, a few primitives and
 * deliberate mistakes go through it; then each recorded answer is validated (Ajv, JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1) against docs/openapi.json with every object closed
 * (`additionalProperties: false` wherever the document does not say the object is open): an
 * answer with a status, a reason or a field the document does not list fails.
 */

type Json = Record<string, unknown>;

interface Exchange {
  method: string;
  url: string;
  requestBody: string;
  status: number;
  contentType: string;
  body: string;
}

const DOCUMENT = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as Json;
const silent = pino({ level: 'silent' });

/** A copy of `node` where every object schema that lists properties and says nothing of others admits no others. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (typeof node !== 'object' || node === null) return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)])) as Json;
  const type = copy.type;
  const isObject = type === 'object' || (Array.isArray(type) && type.includes('object'));
  if (isObject && copy.properties && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** A validator per schema location of the document (`#/paths/...`), closed or as written. */
function validators(document: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(document, 'openapi.json');
  const cache = new Map<string, ValidateFunction>();
  return (location: string): ValidateFunction => {
    let validate = cache.get(location);
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi.json#/${location}` });
      cache.set(location, validate);
    }
    return validate;
  };
}

const closedSchema = validators(closed(DOCUMENT) as Json);
const openSchema = validators(DOCUMENT);
const paths = DOCUMENT.paths as Record<string, Record<string, Json>>;

/** The document's operation for a request, or undefined for a path it does not describe (the sandbox's pages). */
function operationOf(method: string, url: string): { path: string; method: string; operation: Json } | undefined {
  const { pathname, searchParams } = new URL(url, 'http://x');
  const verb = method.toLowerCase();
  const path = pathname === '/' && searchParams.has('action') ? `/${searchParams.get('action')}` : pathname;
  const operation = paths[path]?.[verb];
  if (operation) return { path, method: verb, operation };
  // An action the service does not know answers as the query form does for one (its `default`: the transport failure).
  if (verb === 'post' && /^\/[^/]+$/.test(path)) return { path: '/', method: verb, operation: paths['/']!.post! };
  return undefined;
}

/** What is wrong with one recorded answer, by the document; [] when it conforms. */
function problemsOf(exchange: Exchange): string[] {
  const found = operationOf(exchange.method, exchange.url);
  if (!found) return [];
  const responses = found.operation.responses as Json;
  const status =
    String(exchange.status) in responses ? String(exchange.status) : 'default' in responses ? 'default' : undefined;
  const where = `${exchange.method} ${exchange.url} -> ${exchange.status}`;
  if (!status) return [`${where}: status not in the document`];
  const media = exchange.contentType.split(';')[0]!.trim();
  const content = (responses[status] as Json).content as Json | undefined;
  if (!content?.[media]) return [`${where}: ${media} not in the document`];
  const value: unknown = media === 'application/json' ? JSON.parse(exchange.body) : exchange.body;
  const validate = closedSchema(
    pointer('paths', found.path, found.method, 'responses', status, 'content', media, 'schema'),
  );
  if (validate(value)) return [];
  return [
    `${where}: ${exchange.body.slice(0, 300)}\n  ${(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`).join('\n  ')}`,
  ];
}

/** Whether the document's request schema of `action` accepts `body`, as written (a request may carry what the service ignores). */
function documentAccepts(action: string, body: unknown): boolean {
  return openSchema(pointer('paths', `/${action}`, 'post', 'requestBody', 'content', 'application/json', 'schema'))(
    body,
  );
}

describe('docs/openapi.json against the answers of the service', () => {
  let service: Service;
  let proxy: { url: string; server: Server };
  const exchanges: Exchange[] = [];
  const post = (path: string, body: string, contentType = 'application/json') =>
    fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  const call = (action: string, body: unknown) => post(`/${action}`, JSON.stringify(body));
  const answerOf = (method: string, url: string) => exchanges.find((e) => e.method === method && e.url === url);

  beforeAll(async () => {
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    proxy = await forwardingProxy(service.url, ({ headers, ...exchange }) =>
      exchanges.push({ ...exchange, contentType: headers.get('content-type') ?? '' }),
    );
    const client = sandboxClient(proxy.url);
    for (const scenario of scenarios) await scenario.run(client);

    // The primitives, and the query form of an action.
    const key = '+393339990909';
    await call('otp_generate', { uid: key, phone: key });
    await call('otp_generate', { uid: key, phone: key });
    await call('verify_otp', { uid: key, otp_code: (await client.nextCode(key)) === '000000' ? '000001' : '000000' });
    await call('otp_verify_local', { uid: key, otp_code: 'abcdef' });
    await call('login', { email: 'mario.rossi@example.com', password: 'sandbox-password' });
    await call('login', { email: 'mario.rossi@example.com', password: 'wrong-password' });
    await call('search_user', { phone: '+393331234567' });
    await call('get_user', { uid: 'someone-else', proof: 'forged' });
    await call('refresh_token', { refresh_token: 'not-a-token' });
    await post('/?action=FeLogin', JSON.stringify({ identifier: 'giulia.bianchi@example.com' }));
    await call('newsletter_feed', {});
    await call('recommendations', {});
    await post('/?action=recommendations', '{}');

    // Deliberate mistakes.
    await call('FeLogn', { identifier: 'mario.rossi@example.com' });
    await call('no_such_thing', {});
    await post('/FeLogin', '{"identifier": ');
    await post('/FeLogin', '{"__proto__": {}}');
    await post('/FeLogin', 'identifier=x', 'text/plain');
    await post('/FeLogin', JSON.stringify({ identifier: 'x'.repeat(2_000_000) }));
    await call('FeLogin', {});
    await call('FeLogin', { identifier: 'not an identifier' });
    await call('FeVerifyOtp', { flow: 'email_with_phone', otp_code: '123456', pending_proof: 'forged' });
    await call('newsletter_subscribe', { email: 'mario.rossi@example.com' });
    await call('newsletter_subscribe', { email: 'mario.rossi@example.com', testata: 'head_a' });
    for (const path of ['/FeLogin', '/?action=FeLogin', '/metrics', '/healthz', '/readyz', '/openapi.json'])
      await fetch(`${proxy.url}${path}`, { redirect: 'manual' });
  }, 120_000);
  afterAll(async () => {
    proxy?.server.closeAllConnections();
    await new Promise((resolve) => proxy?.server.close(resolve));
    await service?.close();
  });

  it('holds every answer recorded, with every object closed', () => {
    // Not the document's: a GET on an action, which has no operation (405, below; a validating
    // proxy answers it the same). The sandbox's outbox, where the journeys read their codes, is.
    const undocumented = new Set(
      exchanges.filter((e) => !operationOf(e.method, e.url)).map((e) => `${e.method} ${e.url.replace(/\?to=.*/, '')}`),
    );
    expect([...undocumented].sort()).toEqual(['GET /?action=FeLogin', 'GET /FeLogin']);
    expect(exchanges.length).toBeGreaterThan(60);
    expect(exchanges.flatMap(problemsOf)).toEqual([]);
  });

  it('rejects an answer with a field it does not list: the objects are closed', () => {
    const login = exchanges.find(
      (e) => e.url === '/FeLogin' && e.status === 200 && (JSON.parse(e.body) as Json).success === true,
    )!;
    const answer = JSON.parse(login.body) as { data: Json };
    expect(
      problemsOf({ ...login, body: JSON.stringify({ ...answer, data: { ...answer.data, surprise: 1 } }) }),
    ).toHaveLength(1);
    expect(
      problemsOf({ ...login, body: JSON.stringify({ ...answer, data: { ...answer.data, next_step: 99 } }) }),
    ).toHaveLength(1);
  });

  it('lists GET /metrics answering 404 metrics_not_enabled without a token, and 401 with a wrong one', async () => {
    expect([answerOf('GET', '/metrics')?.status, JSON.parse(answerOf('GET', '/metrics')!.body).data.reason]).toEqual([
      404,
      'metrics_not_enabled',
    ]);
    const deps = testDeps(testConfig({ metrics: { token: 'metrics-token-for-the-test' } }));
    const res = await request(testApp(deps).callback()).get('/metrics').set('authorization', 'Bearer wrong');
    await deps.close();
    expect([res.status, res.body.data.reason]).toEqual([401, 'unauthorized']);
    expect(
      problemsOf({
        method: 'GET',
        url: '/metrics',
        requestBody: '',
        status: res.status,
        contentType: res.headers['content-type'] ?? '',
        body: res.text,
      }),
    ).toEqual([]);
  });

  it('has did_you_mean in the failure schema, where the service answers it', () => {
    const typo = answerOf('POST', '/FeLogn')!;
    expect([typo.status, JSON.parse(typo.body).data]).toEqual([
      404,
      { reason: 'unknown_action', action: 'FeLogn', did_you_mean: 'FeLogin' },
    ]);
    const data = ((DOCUMENT.components as Json).schemas as Record<string, Json>).Failure!.properties as Json;
    expect(((data.data as Json).properties as Json).did_you_mean).toMatchObject({ type: 'string' });
    expect(
      problemsOf({
        ...typo,
        body: JSON.stringify({ ...JSON.parse(typo.body), data: { reason: 'unknown_action', did_you_mean: 7 } }),
      }),
    ).toHaveLength(1);
    // A transport failure's reason is one of the service's, not any string.
    expect(
      problemsOf({ ...typo, body: JSON.stringify({ ...JSON.parse(typo.body), data: { reason: 'made_up' } }) }),
    ).toHaveLength(1);
  });

  it('gives next_step as the enum of the contract steps', () => {
    const data = ((DOCUMENT.components as Json).schemas as Record<string, Json>)['FeLogin.Data']!;
    expect(((data.properties as Json).next_step as Json).enum).toEqual(Object.values(STEP));
  });

  it('refuses in the request schema what the service refuses across fields (newsletter_subscribe)', () => {
    for (const body of [
      { email: 'mario.rossi@example.com' },
      { email: 'mario.rossi@example.com', testata: 'head_a' },
    ]) {
      const answer = exchanges.find(
        (e) => e.url === '/newsletter_subscribe' && e.requestBody === JSON.stringify(body),
      )!;
      expect(JSON.parse(answer.body).data.reason).toBe('invalid_request');
      expect(documentAccepts('newsletter_subscribe', body)).toBe(false);
    }
    expect(
      documentAccepts('newsletter_subscribe', { email: 'mario.rossi@example.com', testata: 'head_a', mlids: '101' }),
    ).toBe(true);
    expect(
      documentAccepts('newsletter_subscribe', {
        email: 'mario.rossi@example.com',
        selections: [{ feed: 'feed_a', mlid: 101 }],
      }),
    ).toBe(true);
  });

  it('accepts every request the service carried out', () => {
    const accepted = exchanges.filter(
      (e) => e.method === 'POST' && e.status === 200 && (JSON.parse(e.body) as Json).success === true,
    );
    const refused = accepted
      .map((e) => ({ url: e.url, body: JSON.parse(e.requestBody) as unknown }))
      .filter(({ url, body }) => !documentAccepts(operationOf('POST', url)!.path.slice(1), body));
    expect(refused).toEqual([]);
  });

  it('answers GET on an action 405 in either address form', () => {
    for (const url of ['/FeLogin', '/?action=FeLogin']) expect([url, answerOf('GET', url)?.status]).toEqual([url, 405]);
  });

  it('lists the raw recommendations body under POST / too, and says why a __proto__ key is malformed_json', () => {
    const raw = answerOf('POST', '/?action=recommendations')!;
    expect(JSON.parse(raw.body)).toHaveProperty('response');
    const queryForm = closedSchema(
      pointer('paths', '/', 'post', 'responses', '200', 'content', 'application/json', 'schema'),
    );
    expect(queryForm(JSON.parse(raw.body))).toBe(true);
    const proto = answerOf('POST', '/FeLogin')!;
    const protoAnswer = exchanges.find((e) => e.requestBody === '{"__proto__": {}}')!;
    expect(proto).toBeDefined();
    expect([protoAnswer.status, JSON.parse(protoAnswer.body).data]).toEqual([
      400,
      { reason: 'malformed_json', issues: [{ path: '__proto__', message: expect.stringContaining('prototype') }] },
    ]);
    expect(problemsOf(protoAnswer)).toEqual([]);
    const described = (paths['/FeLogin']!.post!.responses as Record<string, Json>)['400']!.description;
    expect(described).toContain('__proto__');
  });
});
