import request from 'supertest';
import { mountDemo } from '../../../src/http/demo';
import { testApp, testConfig, testDeps } from '../../support/app';

/* GET /demo and its assets through the real app: served with the sandbox or demo.enabled on, absent otherwise. */

function appWith(overrides: Record<string, unknown>) {
  const deps = testDeps(testConfig(overrides));
  return { deps, server: testApp(deps, { routes: (router) => mountDemo(router, deps) }).callback() };
}

describe('GET /demo', () => {
  const sandbox = appWith({ sandbox: { enabled: true } });
  const demoOnly = appWith({ demo: { enabled: true } });
  const off = appWith({});
  afterAll(async () => {
    for (const { deps } of [sandbox, demoOnly, off]) await deps.close();
  });

  it('serves the page with the sandbox on, under a Content-Security-Policy that allows no inline script', async () => {
    const res = await request(sandbox.server).get('/demo');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves the page with demo.enabled on and the sandbox off', async () => {
    expect((await request(demoOnly.server).get('/demo')).status).toBe(200);
  });

  it('answers 404 for the page and its assets when neither the sandbox nor demo.enabled is on', async () => {
    for (const path of ['/demo', '/demo/demo.js', '/demo/setup.json']) {
      const res = await request(off.server).get(path);
      expect({ path, status: res.status, reason: res.body.data?.reason }).toEqual({
        path,
        status: 404,
        reason: 'unknown_action',
      });
    }
  });

  it('loads its script as a module file and has no inline script or style', async () => {
    const html = (await request(sandbox.server).get('/demo')).text;
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attrs, body]) => ({ attrs: attrs!.trim(), body }))).toEqual([
      { attrs: 'type="module" src="/demo/demo.js"', body: '' },
    ]);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it('labels every input of the page', async () => {
    const html = (await request(sandbox.server).get('/demo')).text;
    const ids = [...html.matchAll(/<input\b[^>]*\bid="([^"]+)"/g)].map((m) => m[1]);
    expect([...html.matchAll(/<input\b/g)]).toHaveLength(ids.length);
    expect(ids.filter((id) => !html.includes(`<label for="${id}"`))).toEqual([]);
  });

  it('serves the script, the stylesheet and the setup with their content types', async () => {
    const js = await request(sandbox.server).get('/demo/demo.js');
    expect([js.status, js.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect(js.text).toContain('FeVerifyOtp');
    const css = await request(sandbox.server).get('/demo/demo.css');
    expect([css.status, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8']);
  });

  it('sends GET / to the demo in the sandbox, and leaves / to the actions elsewhere', async () => {
    const root = await request(sandbox.server).get('/');
    expect([root.status, root.headers.location]).toEqual([302, '/demo']);
    const elsewhere = await request(demoOnly.server).get('/');
    expect(elsewhere.status).toBe(405);
    expect(elsewhere.body.data.reason).toBe('method_not_allowed');
  });

  it('answers GET /?action=<name> 405 like GET /<name>, also in the sandbox where GET / leads to the demo', async () => {
    for (const path of ['/?action=FeLogin', '/?action=otp_generate&x=1', '/?action=', '/FeLogin']) {
      const res = await request(sandbox.server).get(path);
      expect([path, res.status, res.headers.allow, res.body.data?.reason]).toEqual([
        path,
        405,
        'POST',
        'method_not_allowed',
      ]);
    }
    expect((await request(sandbox.server).head('/?action=FeLogin')).status).toBe(405);
    // Any other query still leads to the demo.
    const other = await request(sandbox.server).get('/?utm_source=mail');
    expect([other.status, other.headers.location]).toEqual([302, '/demo']);
  });

  it('links the sandbox outbox page only when the sandbox is on', async () => {
    expect((await request(sandbox.server).get('/demo/setup.json')).body).toMatchObject({
      sandbox: true,
      outbox: '/_sandbox/outbox.html',
    });
    expect((await request(demoOnly.server).get('/demo/setup.json')).body).toMatchObject({
      sandbox: false,
      outbox: null,
      sandboxPassword: null,
    });
  });

  it('tells the page whether passkeys are on and their relying party, the same for everybody, and serves @simplewebauthn/browser from node_modules', async () => {
    const passkeys = appWith({ sandbox: { enabled: true }, passkeys: { enabled: true } });
    const named = appWith({ sandbox: { enabled: true }, passkeys: { enabled: true, rp_id: 'login.example.it' } });
    try {
      // The relying party a deleted passkey is signalled for: the configured one, localhost outside production, none when off.
      for (const [app, passkeysOn, passkeyRpId] of [
        [passkeys, true, 'localhost'],
        [named, true, 'login.example.it'],
        [sandbox, false, null],
      ] as const)
        expect((await request(app.server).get('/demo/setup.json')).body).toMatchObject({
          passkeys: passkeysOn,
          passkeyRpId,
        });
      // The package's ES modules, under the page's CSP ('self'): its index and what it imports.
      const index = await request(sandbox.server).get('/demo/simplewebauthn/index.js');
      expect([index.status, index.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
      expect(index.text).toContain("export * from './methods/startAuthentication.js'");
      const method = await request(sandbox.server).get('/demo/simplewebauthn/methods/startAuthentication.js');
      expect(method.text).toContain('export async function startAuthentication');
      expect((await request(off.server).get('/demo/simplewebauthn/index.js')).status).toBe(404);
    } finally {
      await passkeys.deps.close();
      await named.deps.close();
    }
  });
});
