import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import type { Config } from '../../core/config/schema';
import { apiError } from '../../core/errors';
import { SANDBOX_PASSWORD } from '../../sandbox/identity';
import { demoDiagram } from './diagram';

/*
 * GET /demo: the reference login page (docs/demo.md). Plain HTML, CSS and one module script,
 * read once when the routes are mounted, plus /demo/setup.json (the step diagram generated from
 * the login machine, and whether the sandbox outbox exists). Served only with the sandbox or
 * `demo.enabled` on; otherwise /demo answers like any path that does not exist.
 */

const PAGE_DIR = join(__dirname, 'page');
export const OUTBOX_PATH = '/_sandbox/outbox';

/** No inline script or style, nothing from another origin: the page only talks to this service. */
export const DEMO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const demoEnabled = (config: Config) => config.sandbox.enabled || config.demo.enabled;

interface Asset {
  type: string;
  body: string;
}

function loadAssets(config: Config): Map<string, Asset> {
  const file = (name: string) => readFileSync(join(PAGE_DIR, name), 'utf8');
  const sandbox = config.sandbox.enabled;
  // The seeded users' password is public sandbox data: the page shows it at step 60.
  const setup = { sandbox, outbox: sandbox ? OUTBOX_PATH : null, sandboxPassword: sandbox ? SANDBOX_PASSWORD : null, diagram: demoDiagram() };
  return new Map([
    ['/demo', { type: 'text/html; charset=utf-8', body: file('index.html') }],
    ['/demo/demo.css', { type: 'text/css; charset=utf-8', body: file('demo.css') }],
    ['/demo/demo.js', { type: 'text/javascript; charset=utf-8', body: file('demo.js') }],
    ['/demo/setup.json', { type: 'application/json; charset=utf-8', body: JSON.stringify(setup) }],
  ]);
}

export function mountDemo(router: Router, deps: { config: Config }): void {
  if (!demoEnabled(deps.config)) {
    router.get('/demo{/*rest}', () => {
      throw apiError('unknown_action');
    });
    return;
  }
  const assets = loadAssets(deps.config);
  for (const [path, asset] of assets) {
    router.get(path, (ctx) => {
      ctx.type = asset.type;
      ctx.body = asset.body;
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'no-cache');
      if (path === '/demo') {
        ctx.set('Content-Security-Policy', DEMO_CSP);
        ctx.set('Referrer-Policy', 'no-referrer');
      }
    });
  }
}
