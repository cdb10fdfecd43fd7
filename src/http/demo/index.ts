import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { JOURNEY_IDS, journeyDiagrams, type JourneyDiagram } from '../../../machines';
import type { Config } from '../../core/config/schema';
import { apiError } from '../../core/errors';
import { projectPath } from '../../core/paths';
import { SANDBOX_PASSWORD } from '../../sandbox/identity';
import { demoDiagramOf } from './diagram';
import { flowsPage, flowsSvgPath, journeySvg } from './flows';
import { OUTBOX_PAGE_PATH } from '../sandbox-routes';
import { DEMO_CSP } from '../page-csp';
import type { Deps } from '../../domain/deps';
import { funnelDiagrams } from '../../flows/funnel';
import { funnelStats, mayReadFunnel, parseQuery } from '../funnel';
import { drawFigures } from './diagram-figures';

/*
 * GET /demo: the reference login page (docs/demo.md). Plain HTML, CSS and one module script
 * that talks to the API through the typed client (client/, its build served under
 * /demo/client/), read once, plus /demo/setup.json (the step panel built from the journey
 * diagrams of the login machine, and whether the sandbox outbox exists). GET /flows:
 * the journeys for product and QA, with their rendered diagrams (src/http/demo/flows.ts); for a
 * funnel reader, with a time range and its figures drawn on the diagrams (funnelViews below).
 * Served only with the sandbox or `demo.enabled` on; otherwise /demo and /flows answer like any
 * path that does not exist.
 */

const PAGE_DIR = projectPath('src', 'http', 'demo', 'page');
/** The typed client (client/), compiled by `npm run build` (and `npm start`, `npm run build:client`). */
const CLIENT_SRC = projectPath('client', 'src');
const CLIENT_DIST = projectPath('client', 'dist');
/** The outbox as a page for people (the JSON stays at /_sandbox/outbox, for scripts). */
export const OUTBOX_PATH = OUTBOX_PAGE_PATH;

export const demoEnabled = (config: Config) => config.sandbox.enabled || config.demo.enabled;

/** The SVG diagrams are images: their own styles apply, nothing loads. */
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'";

interface Asset {
  type: string;
  /** The body: files read at mount, the rest built once (the first request waits for the journeys' replay). */
  body: () => string | Promise<string>;
  /** Its Content-Security-Policy; the pages' also send no Referer. */
  csp?: string;
}

const once = <T>(make: () => T): (() => T) => {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
};

function loadAssets(config: Config): Map<string, Asset> {
  // The page files are read now, once; the journeys are replayed on the first request that needs them.
  const file = (name: string) => {
    const text = readFileSync(join(PAGE_DIR, name), 'utf8');
    return () => text;
  };
  const sandbox = config.sandbox.enabled;
  const journeys = once((): Promise<JourneyDiagram[]> => journeyDiagrams());
  // The seeded users' password is public sandbox data: the page shows it at step 60.
  const setup = once(async () =>
    JSON.stringify({ sandbox, outbox: sandbox ? OUTBOX_PATH : null, sandboxPassword: sandbox ? SANDBOX_PASSWORD : null, diagram: demoDiagramOf(await journeys()) }),
  );
  const flows = once(async () => flowsPage(await journeys()));
  const assets = new Map<string, Asset>([
    ['/demo', { type: 'text/html; charset=utf-8', body: file('index.html'), csp: DEMO_CSP }],
    ['/demo/demo.css', { type: 'text/css; charset=utf-8', body: file('demo.css') }],
    ['/demo/demo.js', { type: 'text/javascript; charset=utf-8', body: file('demo.js') }],
    ['/demo/setup.json', { type: 'application/json; charset=utf-8', body: setup }],
    ['/flows', { type: 'text/html; charset=utf-8', body: flows, csp: DEMO_CSP }],
    ['/flows/flows.css', { type: 'text/css; charset=utf-8', body: file('flows.css') }],
  ]);
  // The page talks to the API through the typed client, served as the ES modules tsc compiled
  // (/demo/client/index.js and its siblings). Read on first use: a client never built is an
  // error of that request that says what to run, not a service that cannot start.
  for (const source of readdirSync(CLIENT_SRC).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))) {
    const name = source.replace(/\.ts$/, '.js');
    const path = join(CLIENT_DIST, name);
    const body = once(() => {
      if (!existsSync(path)) throw new Error(`${path} is missing: build the typed client with npm run build:client`);
      return readFileSync(path, 'utf8');
    });
    assets.set(`/demo/client/${name}`, { type: 'text/javascript; charset=utf-8', body });
  }
  // The diagrams `npm run docs` rendered (docs/journeys/); one never generated is not served.
  for (const id of JOURNEY_IDS) {
    const svg = journeySvg(id);
    if (svg !== undefined) assets.set(flowsSvgPath(id), { type: 'image/svg+xml; charset=utf-8', body: () => svg, csp: SVG_CSP });
  }
  return assets;
}

/*
 * /flows and its diagrams for a funnel reader (the internal key, `funnel.read_key`, the sandbox;
 * docs/funnel.md): the page with the range control, and with `since` or `from`/`to` the range's
 * figures under each diagram and drawn on it (the SVG asked with the same range). Everyone else
 * gets the page and the SVGs as committed, whatever the query: public documentation, no counts.
 */
type Served = { type: string; body: string; csp?: string } | undefined;

function funnelViews(deps: Deps, assets: Map<string, Asset>): Map<string, (ctx: Context) => Promise<Served>> {
  const views = new Map<string, (ctx: Context) => Promise<Served>>();
  const flows = assets.get('/flows')!;
  views.set('/flows', async (ctx) => {
    if (!mayReadFunnel(deps, ctx)) return undefined;
    const query = parseQuery(ctx);
    const diagrams = await funnelDiagrams();
    const ranged = query.since !== undefined || query.from !== undefined;
    const current = query.from === undefined ? query.since : undefined;
    const stats = ranged ? await funnelStats(deps, { ...query, compare: undefined, compare_from: undefined, compare_to: undefined }) : undefined;
    return { type: flows.type, body: flowsPage(diagrams, { ...(stats ? { stats } : {}), ...(current ? { current } : {}) }), csp: DEMO_CSP };
  });
  for (const id of JOURNEY_IDS) {
    const path = flowsSvgPath(id);
    const svg = assets.get(path);
    if (!svg) continue;
    views.set(path, async (ctx) => {
      if (!mayReadFunnel(deps, ctx)) return undefined;
      const query = parseQuery(ctx);
      if (query.since === undefined && query.from === undefined) return undefined;
      const diagram = (await funnelDiagrams()).find((d) => d.id === id)!;
      const stats = await funnelStats(deps, { journey: id, ...(query.since ? { since: query.since } : {}), ...(query.from !== undefined ? { from: query.from } : {}), ...(query.to !== undefined ? { to: query.to } : {}) });
      return { type: svg.type, body: drawFigures(await svg.body(), diagram, stats.journeys[0]!), ...(svg.csp ? { csp: svg.csp } : {}) };
    });
  }
  return views;
}

export function mountDemo(router: Router, deps: Deps): void {
  if (!demoEnabled(deps.config)) {
    router.get(['/demo{/*rest}', '/flows{/*rest}'], () => {
      throw apiError('unknown_action');
    });
    return;
  }
  // A newcomer's first request in the sandbox is a browser on the root: the demo is where to go.
  if (deps.config.sandbox.enabled) router.get('/', (ctx) => ctx.redirect('/demo'));
  const assets = loadAssets(deps.config);
  const views = funnelViews(deps, assets);
  for (const [path, asset] of assets) {
    const view = views.get(path);
    router.get(path, async (ctx) => {
      const counted = view ? await view(ctx) : undefined;
      const served = counted ?? { type: asset.type, body: await asset.body(), ...(asset.csp ? { csp: asset.csp } : {}) };
      ctx.type = served.type;
      ctx.body = served.body;
      ctx.set('X-Content-Type-Options', 'nosniff');
      // Counts of who logs in when: no cache keeps them, nor the funnel reader's page.
      ctx.set('Cache-Control', counted ? 'no-store' : 'no-cache');
      if (served.csp) ctx.set('Content-Security-Policy', served.csp);
      if (served.csp === DEMO_CSP) ctx.set('Referrer-Policy', 'no-referrer');
    });
  }
}
