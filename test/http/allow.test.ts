import type Router from '@koa/router';
import request from 'supertest';
import { actions } from '../../src/actions';
import { mountDemo } from '../../src/http/demo';
import { mountFunnel } from '../../src/http/funnel';
import { mountSandboxRoutes } from '../../src/http/sandbox-routes';
import type { Outbox } from '../../src/sandbox/outbox';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * 405 per resource (RFC 9110, 15.5.6): the Allow header of a 405 names the methods the resource
 * takes. Held over every route the app mounts (the router's own list, so a route added later is
 * covered) and every action: the Allow of a PUT is exactly the set of methods that the resource
 * answers with anything but 405.
 */

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const SMS_PATHS = ['/sms', '/_sms/ledger', '/_sms/blocks/lift', '/_sms/receipts/twilio'];

const outbox = { list: () => [], to: () => [], clear: () => {} } as unknown as Outbox;

/** A concrete path for a route's pattern: each parameter a word, an optional tail left out. */
const concrete = (pattern: string) => pattern.replace(/\{[^}]*\}/g, '').replace(/:\w+/g, 'x');

describe('405 Method Not Allowed', () => {
  const deps = testDeps(testConfig({ sandbox: { enabled: true }, funnel: { enabled: true } }));
  let router: Router | undefined;
  const app = testApp(deps, {
    routes: (r) => {
      mountSandboxRoutes(r, { outbox, mayReadJourneys: () => true, reset: () => {} });
      mountFunnel(r, deps);
      mountDemo(r, deps);
      router = r;
    },
  }).callback();
  afterAll(() => deps.close());

  const send = (method: string, path: string) => {
    const verb = method.toLowerCase() as 'get';
    const body = method === 'GET' || method === 'HEAD' ? undefined : '{}';
    return request(app)[verb](path).set('content-type', 'application/json').send(body);
  };

  const paths = () => [
    ...new Set([
      ...router!.stack.filter((layer) => layer.methods.length > 0).map((layer) => concrete(String(layer.path))),
      ...actions.map((a) => `/${a.name}`),
      '/?action=FeLogin',
      ...SMS_PATHS,
    ]),
  ];

  it('names in Allow exactly the methods each resource answers with anything but 405', async () => {
    expect(paths().length).toBeGreaterThan(actions.length + 10);
    const wrong: unknown[] = [];
    for (const path of paths()) {
      const answered: string[] = [];
      for (const method of METHODS) if ((await send(method, path)).status !== 405) answered.push(method);
      const refused = await send('PUT', path);
      const allow = refused.status === 405 ? String(refused.headers.allow).split(', ') : [];
      if (refused.status !== 405 || [...allow].sort().join() !== [...answered].sort().join())
        wrong.push({ path, status: refused.status, allow, answered });
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it.each([
    ['/healthz', 'GET, HEAD'],
    ['/readyz', 'GET, HEAD'],
    ['/metrics', 'GET, HEAD'],
    ['/openapi.json', 'GET, HEAD'],
    ['/FeLogin', 'POST'],
    ['/?action=FeLogin', 'POST'],
    ['/no_such_action', 'POST'],
    ['/', 'GET, HEAD, POST'],
    ['/_sms/blocks/lift', 'POST'],
    ['/_sms/receipts/twilio', 'GET, POST'],
    ['/sms', 'GET, HEAD'],
    ['/flows/stats', 'GET, HEAD'],
  ])('answers DELETE %s with 405, Allow: %s, and the text says so', async (path, allow) => {
    const res = await send('DELETE', path);
    expect([res.status, res.headers.allow, res.body.data.reason, res.body.error]).toEqual([
      405,
      allow,
      'method_not_allowed',
      `Metodo non consentito: usa ${allow}.`,
    ]);
  });

  it('answers a POST to a GET resource 405, not as an unknown action', async () => {
    const res = await send('POST', '/healthz');
    expect([res.status, res.headers.allow]).toEqual([405, 'GET, HEAD']);
  });
});
