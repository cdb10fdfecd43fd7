import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import { actions } from '../../src/actions';
import { mountDemo } from '../../src/http/demo';
import { mountFunnel } from '../../src/http/funnel';
import { mountSandboxRoutes } from '../../src/http/sandbox-routes';
import { SMS_ROUTES } from '../../src/http/sms-routes';
import type { JourneyRecorder } from '../../src/flows/journey-recorder';
import type { Outbox } from '../../src/sandbox/outbox';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * Every route the app mounts is in docs/openapi.json, and every path of the document is mounted
 * (issue 47): the Koa router's own list with every optional route on (the sandbox's outbox and
 * journeys, the funnel, the demo), the actions, and the SMS routes beside them. A route added
 * later without its operation, or an operation left behind by a removed route, fails here.
 */

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema?: { enum?: string[] };
}

const DOCUMENT = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Json & { parameters?: Parameter[] }>>;
};
const VERBS = ['get', 'post', 'put', 'patch', 'delete'];

/** A documented path as a regular expression: each `{param}` one segment, or one of its enum values. */
function templateOf(path: string, parameters: Parameter[] = []): RegExp {
  const source = path
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const name = /^\{([^}]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      const values = parameters.find((p) => p.in === 'path' && p.name === name)?.schema?.enum;
      return values ? `(${values.map((v) => v.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('|')})` : '[^/]+';
    })
    .join('');
  return new RegExp(`^${source}$`);
}

const documented = Object.entries(DOCUMENT.paths).flatMap(([path, item]) =>
  VERBS.filter((verb) => item[verb]).map((verb) => ({
    route: `${verb.toUpperCase()} ${path}`,
    method: verb.toUpperCase(),
    template: templateOf(path, item[verb]!.parameters),
  })),
);

describe('the routes the app mounts and the paths of docs/openapi.json', () => {
  const deps = testDeps(testConfig({ sandbox: { enabled: true }, funnel: { enabled: true }, debug: true }));
  let router: Router | undefined;
  testApp(deps, {
    routes: (r) => {
      mountSandboxRoutes(r, {
        outbox: {} as Outbox,
        journeys: {} as JourneyRecorder,
        mayReadJourneys: () => true,
        reset: () => {},
      });
      mountFunnel(r, deps);
      mountDemo(r, deps);
      router = r;
    },
  });
  afterAll(() => deps.close());

  /** Each mounted route and method but HEAD (a GET's), a parameter as a word. */
  const mounted = () =>
    [
      ...router!.stack.map((layer) => ({ path: String(layer.path), methods: layer.methods })),
      ...SMS_ROUTES,
      ...actions.map((action) => ({ path: `/${action.name}`, methods: ['POST'] })),
      { path: '/', methods: ['POST'] },
    ].flatMap(({ path, methods }) =>
      methods
        .filter((method) => method !== 'HEAD')
        .map((method) => ({ route: `${method} ${path}`, method, concrete: path.replace(/:\w+/g, 'x') })),
    );

  it('mounts the routes it is asked for', () => {
    expect(mounted().length).toBeGreaterThan(actions.length + 30);
  });

  it('documents every route it mounts', () => {
    const missing = mounted().filter(
      ({ method, concrete }) => !documented.some((d) => d.method === method && d.template.test(concrete)),
    );
    expect(missing.map((m) => m.route)).toEqual([]);
  });

  it('mounts every path it documents', () => {
    const routes = mounted();
    const unmounted = documented.filter(
      ({ method, template }) => !routes.some((r) => r.method === method && template.test(r.concrete)),
    );
    expect(unmounted.map((d) => d.route)).toEqual([]);
  });
});
