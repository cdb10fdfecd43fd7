import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import request from 'supertest';
import { z } from 'zod';
import { actionsByName } from '../../src/actions';
import type { Deps } from '../../src/domain/deps';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * A few hundred malformed bodies over every registered action: whatever arrives, the answer is
 * the envelope with a transport status of docs/contract.md#errors (never a 5xx, never a stack), and nothing
 * leaks into Object.prototype. Upstreams are unreachable (nock refuses every connection), so an
 * action that gets as far as calling one must turn that into its own clean failure too.
 */

const ALLOWED_STATUSES = [200, 400, 404, 405, 413];
const keepAlive = new Agent({ keepAlive: true, maxSockets: 25 });
const HUGE = 'x'.repeat(70 * 1024);

const deep = (depth: number, leaf: unknown = 1): unknown => (depth === 0 ? leaf : { a: deep(depth - 1, leaf) });
const deepArray = (depth: number): unknown => (depth === 0 ? [] : [deepArray(depth - 1)]);

/** Values that break naive handlers, to put in every field an action declares. */
const hostileValues: unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  '',
  ' ',
  'x'.repeat(5000),
  '\u0000\u0001\u001f',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '../../../../etc/passwd',
  '%00%2e%2e',
  '+39 333 123 4567\n',
  'a@b',
  '😀'.repeat(300),
  '\u202eevil',
  [],
  ['a', 'b'],
  {},
  { $gt: '' },
  deep(12),
  deepArray(12),
  Array.from({ length: 2000 }, (_, i) => i),
];

/** Whole bodies as raw JSON text, including what a JS object literal cannot express (`__proto__` as a key). */
const rawBodies: string[] = [
  'null',
  'true',
  '0',
  '"text"',
  '[]',
  '[{}]',
  '{}',
  '{"__proto__":{"polluted":"yes"}}',
  '{"a":{"__proto__":{"polluted":"yes"}}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"prototype":{"polluted":"yes"}}',
  '{"uid":"a","uid":"b"}',
  JSON.stringify(deep(40)),
  '['.repeat(3000) + ']'.repeat(3000),
  '{"a":' + '['.repeat(100) + ']'.repeat(100) + '}',
  JSON.stringify({ x: HUGE }),
  '{"unterminated":',
  '{uid: 1}',
  '\uFEFF{}',
  '',
];

function fieldsOf(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** Every hostile value in every declared field, alone and beside otherwise plausible fields. */
function bodiesFor(fields: string[]): string[] {
  const bodies = [...rawBodies];
  for (const field of fields) {
    for (const value of hostileValues) {
      bodies.push(JSON.stringify({ [field]: value }));
    }
    bodies.push(JSON.stringify(Object.fromEntries(fields.map((f) => [f, f === field ? HUGE.slice(0, 60_000) : 'a']))));
  }
  bodies.push(
    JSON.stringify(Object.fromEntries(fields.map((f) => [f, hostileValues[fields.indexOf(f) % hostileValues.length]]))),
  );
  return bodies;
}

function expectEnvelope(action: string, status: number, body: unknown): void {
  expect(ALLOWED_STATUSES).toContain(status);
  expect(typeof body).toBe('object');
  const envelope = body as Record<string, unknown>;
  // recommendations answers its bare widget body on success when recommendations.debug is off (docs/contract.md#addressing-and-envelope).
  if (action === 'recommendations' && envelope.success === undefined) {
    expect(envelope.response).toEqual(expect.objectContaining({ items: expect.any(Array) }));
    return;
  }
  expect(typeof envelope.success).toBe('boolean');
  if (envelope.success === false) {
    expect(typeof envelope.error).toBe('string');
    expect(envelope.data).toEqual(expect.objectContaining({ reason: expect.stringMatching(/^[a-z_]+$/) }));
    expect(JSON.stringify(envelope)).not.toMatch(/\bat .+\.(ts|js):\d+/);
  } else {
    expect(envelope.error).toBeNull();
  }
}

describe('hostile input over every action', () => {
  let deps: Deps;
  let server: Server;
  let url: string;
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1|localhost/);
    // Channels configured but refusing connections (a closed loopback port), so bodies that pass
    // validation exercise the send path too.
    deps = testDeps(
      testConfig({
        sms: { api_url: 'http://127.0.0.1:1/send', api_key: 'k' },
        mail: { host: '127.0.0.1', port: 1, from_address: 'otp@example.test' },
      }),
    );
    server = createServer(testApp(deps).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await deps.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    nock.enableNetConnect();
    keepAlive.destroy();
  });

  it('covers a registered action list', () => {
    expect(actionsByName.size).toBeGreaterThan(0);
  });

  it.each([...actionsByName.values()].map((action) => [action.name, action] as const))(
    '%s answers every malformed body with the envelope and no 5xx',
    async (name, action) => {
      const bodies = bodiesFor(fieldsOf(action.request));
      const failures: string[] = [];
      for (let i = 0; i < bodies.length; i += 25) {
        await Promise.all(
          bodies.slice(i, i + 25).map(async (raw) => {
            const res = await request(url)
              .post(`/?action=${name}`)
              .agent(keepAlive)
              .set('content-type', 'application/json')
              .send(raw);
            try {
              expectEnvelope(name, res.status, res.body);
            } catch {
              failures.push(`${res.status} ${raw.slice(0, 80)} -> ${JSON.stringify(res.body).slice(0, 200)}`);
            }
          }),
        );
      }
      expect(failures).toEqual([]);
      expect(bodies.length).toBeGreaterThan(20);
    },
  );

  it('answers the same bodies on the path form, on a wrong method and on an unknown action', async () => {
    for (const raw of rawBodies) {
      const unknown = await request(url).post('/no_such_action').set('content-type', 'application/json').send(raw);
      expectEnvelope('no_such_action', unknown.status, unknown.body);
      const [first] = actionsByName.keys();
      const wrongMethod = await request(url).put(`/${first}`).set('content-type', 'application/json').send(raw);
      expect(wrongMethod.status).toBe(405);
      expectEnvelope(first!, wrongMethod.status, wrongMethod.body);
    }
  });

  it('leaves Object.prototype clean', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
