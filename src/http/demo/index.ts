import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { JOURNEY_IDS, journeyDiagrams, type JourneyDiagram } from '../../../machines';
import type { Config } from '../../core/config/schema';
import { apiError } from '../../core/errors';
import { projectPath } from '../../core/paths';
import { SANDBOX_PASSWORD } from '../../sandbox/identity';
import { demoDiagramOf } from './diagram';
import { atDiagramScale, FLOWS_CSS_PATH, flowsPage, flowsSvgPath, journeySvg, type FlowsLinks } from './flows';
import { OUTBOX_PAGE_PATH } from '../sandbox-routes';
import { DEMO_CSP } from '../page-csp';
import type { Deps } from '../../domain/deps';
import { funnelDiagrams } from '../../domain/funnel/counting';
import { relyingParty } from '../../domain/passkeys/ceremonies';
import { funnelStats, mayReadFunnel, parseQuery } from '../funnel';
import { drawFigures } from './diagram-figures';

/*
 * GET /demo: the reference login page (docs/demo.md). Plain HTML, CSS and one module script
 * that talks to the API through the typed client (client/, its build served under
 * /demo/client/), read once, plus /demo/setup.json (the step panel built from the journey
 * diagrams of the login machine, and whether the sandbox outbox exists). GET /flows:
 * the journeys for product and QA, with their rendered diagrams (src/http/demo/flows.ts); for a
 * funnel reader, with a time range and its figures drawn on the diagrams (funnelViews below).
 * Served to everyone only with the sandbox or `demo.enabled` on. Otherwise /demo answers like any
 * path that does not exist, and so does /flows for anyone but a funnel reader: the funnel counts
 * in production, where the demo is off, and its figures belong on the diagrams there too.
 */

const PAGE_DIR = projectPath('src', 'http', 'demo', 'page');
/** The typed client (client/), compiled by `npm run build` (and `npm start`, `npm run build:client`). */
const CLIENT_SRC = projectPath('client', 'src');
const CLIENT_DIST = projectPath('client', 'dist');
/**
 * ALTCHA's widget (the `altcha` package), its CSP-strict build: no inline style, no worker made
 * from a blob; its stylesheet and its SHA worker are files of their own, served beside it.
 */
const ALTCHA_DIST = join(dirname(require.resolve('altcha/external')), '..');
const ALTCHA_FILES = [
  ['/demo/altcha/altcha.js', join(ALTCHA_DIST, 'external', 'altcha.min.js'), 'text/javascript; charset=utf-8'],
  ['/demo/altcha/altcha.css', join(ALTCHA_DIST, 'external', 'altcha.css'), 'text/css; charset=utf-8'],
  ['/demo/altcha/sha.js', join(ALTCHA_DIST, 'workers', 'sha.js'), 'text/javascript; charset=utf-8'],
  // The page is Italian: the widget's own words too.
  ['/demo/altcha/it.js', join(ALTCHA_DIST, 'i18n', 'it.js'), 'text/javascript; charset=utf-8'],
] as const;
/**
 * @simplewebauthn/browser's ES modules, as the package ships them (esm/, relative imports between
 * its files): the page's passkey ceremonies, served from node_modules, no CDN, no bundler.
 */
const WEBAUTHN_ESM = join(dirname(require.resolve('@simplewebauthn/browser')), '..', 'esm');
const WEBAUTHN_PATH = '/demo/simplewebauthn';

const jsFilesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'));

/** The outbox as a page for people (the JSON stays at /_sandbox/outbox, for scripts). */
const OUTBOX_PATH = OUTBOX_PAGE_PATH;

const demoEnabled = (config: Config) => config.sandbox.enabled || config.demo.enabled;

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

type Journeys = () => Promise<JourneyDiagram[]>;

/** /demo, its page files and the typed client: what a checkout carries, served only with the demo on. */
function demoAssets(config: Config, journeys: Journeys): Map<string, Asset> {
  // The page files are read now, once; the journeys are replayed on the first request that needs them.
  const file = (name: string) => {
    const text = readFileSync(join(PAGE_DIR, name), 'utf8');
    return () => text;
  };
  const sandbox = config.sandbox.enabled;
  // The seeded users' password is public sandbox data: the page shows it at step 60.
  const setup = once(async () =>
    JSON.stringify({
      sandbox,
      outbox: sandbox ? OUTBOX_PATH : null,
      sandboxPassword: sandbox ? SANDBOX_PASSWORD : null,
      // The same for every visitor: whether to offer passkeys at all, never whether an account has one.
      passkeys: config.passkeys.enabled,
      // Public (every ceremony's options name it): the page tells the browser of a passkey it deletes.
      passkeyRpId: config.passkeys.enabled ? relyingParty(config).id : null,
      diagram: demoDiagramOf(await journeys()),
    }),
  );
  const assets = new Map<string, Asset>([
    ['/demo', { type: 'text/html; charset=utf-8', body: file('index.html'), csp: DEMO_CSP }],
    ['/demo/demo.css', { type: 'text/css; charset=utf-8', body: file('demo.css') }],
    ['/demo/demo.js', { type: 'text/javascript; charset=utf-8', body: file('demo.js') }],
    ['/demo/setup.json', { type: 'application/json; charset=utf-8', body: setup }],
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
  // The bot challenge's widget (docs/security.md, "Bot challenge"), read on first use like the client.
  for (const [path, file, type] of ALTCHA_FILES)
    assets.set(path, { type, body: once(() => readFileSync(file, 'utf8')) });
  for (const name of jsFilesUnder(WEBAUTHN_ESM)) {
    const path = join(WEBAUTHN_ESM, name);
    assets.set(`${WEBAUTHN_PATH}/${name}`, {
      type: 'text/javascript; charset=utf-8',
      body: once(() => readFileSync(path, 'utf8')),
    });
  }
  return assets;
}

/** /flows, its stylesheet and its diagrams: files a build carries (scripts/build-assets.ts), so a production install serves them. */
function flowsAssets(links: FlowsLinks, journeys: Journeys): Map<string, Asset> {
  // Read on first use, like the client: a build made without its assets fails that request, not the start.
  const css = once(() => {
    if (!existsSync(FLOWS_CSS_PATH))
      throw new Error(`${FLOWS_CSS_PATH} is missing: build with npm run build, which copies it`);
    return readFileSync(FLOWS_CSS_PATH, 'utf8');
  });
  const page = once(async () => flowsPage(await journeys(), links));
  const assets = new Map<string, Asset>([
    ['/flows', { type: 'text/html; charset=utf-8', body: page, csp: DEMO_CSP }],
    ['/flows/flows.css', { type: 'text/css; charset=utf-8', body: css }],
  ]);
  // The diagrams `npm run docs` rendered (docs/journeys/); one never generated is not served.
  for (const id of JOURNEY_IDS) {
    const svg = journeySvg(id);
    if (svg !== undefined)
      assets.set(flowsSvgPath(id), { type: 'image/svg+xml; charset=utf-8', body: () => svg, csp: SVG_CSP });
  }
  return assets;
}

/*
 * /flows and its diagrams for a funnel reader (the internal key, `funnel.read_key`, the sandbox;
 * docs/funnel.md): the page with the range control, and with `since` or `from`/`to` the range's
 * figures under each diagram and drawn on it (the SVG asked with the same range). Where the demo
 * is on, everyone else gets the page and the SVGs as committed, whatever the query: public
 * documentation, no counts.
 */
type Served = { type: string; body: string; csp?: string } | undefined;

function funnelViews(
  deps: Deps,
  assets: Map<string, Asset>,
  links: FlowsLinks,
): Map<string, (ctx: Context) => Promise<Served>> {
  const views = new Map<string, (ctx: Context) => Promise<Served>>();
  const flows = assets.get('/flows')!;
  views.set('/flows', async (ctx) => {
    if (!mayReadFunnel(deps, ctx)) return undefined;
    const query = parseQuery(ctx);
    const diagrams = await funnelDiagrams();
    const ranged = query.since !== undefined || query.from !== undefined;
    const current = query.from === undefined ? query.since : undefined;
    const stats = ranged
      ? await funnelStats(deps, { ...query, compare: undefined, compare_from: undefined, compare_to: undefined })
      : undefined;
    return {
      type: flows.type,
      body: flowsPage(diagrams, links, { ...(stats ? { stats } : {}), ...(current ? { current } : {}) }),
      csp: DEMO_CSP,
    };
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
      const stats = await funnelStats(deps, {
        journey: id,
        ...(query.since ? { since: query.since } : {}),
        ...(query.from !== undefined ? { from: query.from } : {}),
        ...(query.to !== undefined ? { to: query.to } : {}),
      });
      return {
        type: svg.type,
        body: drawFigures(await svg.body(), diagram, stats.journeys[0]!),
        ...(svg.csp ? { csp: svg.csp } : {}),
      };
    });
  }
  return views;
}

export function mountDemo(router: Router, deps: Deps): void {
  const { config } = deps;
  const demo = demoEnabled(config);
  // A newcomer's first request in the sandbox is a browser on the root: the demo is where to go.
  if (config.sandbox.enabled) router.get('/', (ctx) => ctx.redirect('/demo'));
  const journeys = once((): Promise<JourneyDiagram[]> => journeyDiagrams());
  // The page links only what is served: /demo with the demo, the outbox with the sandbox.
  const links: FlowsLinks = { demo, ...(config.sandbox.enabled ? { outbox: OUTBOX_PATH } : {}) };
  const flows = flowsAssets(links, journeys);
  const views = funnelViews(deps, flows, links);
  const assets = demo ? new Map([...demoAssets(config, journeys), ...flows]) : flows;
  const readerOnly = !demo;
  for (const [path, asset] of assets) {
    const view = views.get(path);
    router.get(path, async (ctx) => {
      if (readerOnly && !mayReadFunnel(deps, ctx)) throw apiError('unknown_action');
      const counted = view ? await view(ctx) : undefined;
      const served = counted ?? {
        type: asset.type,
        body: await asset.body(),
        ...(asset.csp ? { csp: asset.csp } : {}),
      };
      ctx.type = served.type;
      // Every diagram at one scale, figures drawn or not: one text size across the journeys.
      ctx.body = served.type.startsWith('image/svg+xml') ? atDiagramScale(served.body) : served.body;
      ctx.set('X-Content-Type-Options', 'nosniff');
      // Counts of who logs in when: no cache keeps them, nor what only a funnel reader is shown.
      ctx.set('Cache-Control', counted || readerOnly ? 'no-store' : 'no-cache');
      if (served.csp) ctx.set('Content-Security-Policy', served.csp);
      if (served.csp === DEMO_CSP) ctx.set('Referrer-Policy', 'no-referrer');
    });
  }
  // Without the demo: the rest of /demo and /flows, and /flows for anyone but a reader, as any path that does not exist.
  if (!demo) {
    router.get(['/demo{/*rest}', '/flows{/*rest}'], () => {
      throw apiError('unknown_action');
    });
  }
}
