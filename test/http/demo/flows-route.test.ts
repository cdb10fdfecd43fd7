import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { JOURNEY_IDS, journeyDiagrams } from '../../../machines';
import { mountDemo } from '../../../src/http/demo';
import { atDiagramScale } from '../../../src/http/demo/flows';
import { journeyExamples } from '../../../src/http/demo/flow-examples';
import { entriesOf } from '../../support/funnel-journeys';
import { testApp, testConfig, testDeps } from '../../support/app';

/* GET /flows through the real app: the journeys for product and QA, served where /demo is, under the same CSP. */

// These tests try wrong keys on purpose, more than a client may before it is locked out of every key (test/security/key-guessing.test.ts).
const GUESSES_ALLOWED = { rate_limits: { wrong_keys_per_ip: 1000 } };

function appWith(overrides: Record<string, unknown>) {
  const deps = testDeps(testConfig({ ...GUESSES_ALLOWED, ...overrides }));
  return { deps, server: testApp(deps, { routes: (router) => mountDemo(router, deps) }).callback() };
}

const escapeQuotes = (text: string) => text.replace(/"/g, '&quot;');

describe('GET /flows', () => {
  const sandbox = appWith({ sandbox: { enabled: true } });
  const demoOnly = appWith({ demo: { enabled: true } });
  const off = appWith({});
  afterAll(async () => {
    for (const { deps } of [sandbox, demoOnly, off]) await deps.close();
  });

  it('serves the page with the sandbox or demo.enabled on, under the demo page’s Content-Security-Policy', async () => {
    const res = await request(sandbox.server).get('/flows');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("img-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect((await request(demoOnly.server).get('/flows')).status).toBe(200);
  });

  it('answers 404 for the page, its stylesheet and its diagrams when neither the sandbox nor demo.enabled is on', async () => {
    for (const path of ['/flows', '/flows/flows.css', '/flows/phone-login.svg']) {
      const res = await request(off.server).get(path);
      expect({ path, status: res.status, reason: res.body.data?.reason }).toEqual({
        path,
        status: 404,
        reason: 'unknown_action',
      });
    }
  });

  it('has no script and no inline style', async () => {
    const html = (await request(sandbox.server).get('/flows')).text;
    expect(html).not.toMatch(/<script\b|<style\b|\sstyle=|\son[a-z]+=/i);
    expect((await request(sandbox.server).get('/flows/flows.css')).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
  });

  it('shows every journey with its title, its diagram, its steps, its refusals and its requests', async () => {
    const html = (await request(sandbox.server).get('/flows')).text;
    for (const diagram of await journeyDiagrams()) {
      const section = html.slice(
        html.indexOf(`<section class="journey" id="${diagram.id}"`),
        html.indexOf('</section>', html.indexOf(`id="${diagram.id}"`)),
      );
      expect(section).toContain(`<h2 id="${diagram.id}-title">`);
      expect(section).toContain(`<img src="/flows/${diagram.id}.svg"`);
      expect(section.match(/<tr data-state=/g)).toHaveLength(diagram.screens.length);
      expect(section.match(/<pre class="request">/g)).toHaveLength(diagram.replayed.length);
    }
    expect(html).toContain('OTP non valido.');
    expect(html).toContain('POST /FeVerifyOtp');
    expect(html).not.toContain('?action=');
    expect(html).not.toContain('In the contract');
  });

  it('serves each journey’s SVG as committed in docs/journeys/, sized at one scale, as an image that loads nothing', async () => {
    for (const id of JOURNEY_IDS) {
      const res = await request(sandbox.server).get(`/flows/${id}.svg`);
      expect({ id, status: res.status, type: res.headers['content-type'] }).toEqual({
        id,
        status: 200,
        type: 'image/svg+xml; charset=utf-8',
      });
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      const committed = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'journeys', `${id}.svg`), 'utf8');
      const served = res.body.toString('utf8');
      expect(served).toBe(atDiagramScale(committed));
      // Its size is its viewBox's, one unit one pixel: never `width="100%"`, which an image stretches to its column.
      const [, , width, height] = /<svg[^>]*viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"/
        .exec(committed)!
        .slice(1)
        .map(Number);
      expect(/<svg[^>]*>/.exec(served)![0]).toMatch(
        new RegExp(`^<svg width="${Math.ceil(width!)}" height="${Math.ceil(height!)}" `),
      );
      expect(/<svg[^>]*>/.exec(served)![0]).not.toMatch(/100%|max-width/);
    }
  });

  it('shows each journey’s examples as one person recorded them in the sandbox, proofs and tokens by what they bind', async () => {
    const html = (await request(sandbox.server).get('/flows')).text;
    const examples = journeyExamples();
    for (const id of JOURNEY_IDS) {
      const section = html.slice(
        html.indexOf(`<section class="journey" id="${id}"`),
        html.indexOf('</section>', html.indexOf(`id="${id}"`)),
      );
      const { person, requests } = examples.get(id)!;
      expect(section).toContain(`<strong>${person.name}</strong> (uid <code>${person.uid}</code>`);
      expect(section.match(/<pre class="answer">/g)).toHaveLength(requests.length);
      // What the person typed first (a passkey login types nothing: its assertion, shown by what it is).
      const first = requests[0]!;
      const field =
        first.action === 'FeLogin' ? 'identifier' : first.action === 'PasskeyLogin' ? 'credential' : 'email';
      expect(section).toContain(escapeQuotes(`"${field}": "${String(first.body[field])}"`));
    }
    const phoneLogin = html.slice(
      html.indexOf('<section class="journey" id="phone-login"'),
      html.indexOf('</section>', html.indexOf('id="phone-login"')),
    );
    expect(phoneLogin).toContain('‹token firmato: sub PNIa7Xk2mR0ssi, email mario.rossi@example.com');
    expect(phoneLogin).toContain(
      '‹prova firmata: verified; flow phone, step 90, uid PNIa7Xk2mR0ssi, email mario.rossi@example.com, phone +393331234567',
    );
    expect(phoneLogin).toContain('‹il codice inviato a +393331234567, in /_sandbox/outbox›');
    // Nobody of the machine's fake world, whose tokens the seeded people used to be shown with.
    expect(html).not.toMatch(/anna@|uid-anna|bruno@|carla@|token-for-|uid-new-/);
  });
});

/*
 * The funnel on /flows (docs/funnel.md): a funnel reader (the internal key, the read-only key,
 * the sandbox) gets the range control and, with a range, the figures under each diagram and on
 * it; anyone else gets the page and the SVGs exactly as committed, whatever the query.
 */
describe('GET /flows with the funnel', () => {
  const READ_KEY = 'funnel-read-key-for-flows';
  const INTERNAL_KEY = 'internal-key-for-flows';
  const { deps, server } = appWith({
    demo: { enabled: true },
    security: { internal_key: INTERNAL_KEY },
    funnel: { read_key: READ_KEY, flush_ms: 0 },
  });
  const sandbox = appWith({ sandbox: { enabled: true } });
  const reader = { 'x-funnel-key': READ_KEY };
  beforeAll(async () => {
    // 12 people reach the code screen of the phone login, 7 log in; 4 typed a wrong code once.
    const entries = await entriesOf([
      ...Array.from({ length: 7 }, () => ({ journey: 'phone-login' })),
      ...Array.from({ length: 5 }, (_, i) => ({ journey: 'phone-login', requests: 1, wrong: [i < 4 ? 1 : 0] })),
    ]);
    for (const entry of entries) deps.funnel.add(entry);
  });
  afterAll(async () => {
    await deps.close();
    await sandbox.deps.close();
  });
  const get = (path: string, headers: Record<string, string> = {}) => request(server).get(path).set(headers);

  it('shows anyone else the page and the diagrams as committed, whatever the query', async () => {
    const plain = (await get('/flows')).text;
    for (const headers of [{}, { 'x-funnel-key': 'wrong' }, { 'x-internal-key': 'wrong' }] as Array<
      Record<string, string>
    >) {
      const res = await get('/flows?since=1h', headers);
      expect(res.status).toBe(200);
      expect(res.text).toBe(plain);
      expect(res.headers['cache-control']).toBe('no-cache');
      const svg = await get(`/flows/phone-login.svg?from=${Date.now() - 3_600_000}&to=${Date.now()}`, headers);
      expect(svg.body.toString('utf8')).toBe(
        atDiagramScale(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'journeys', 'phone-login.svg'), 'utf8')),
      );
    }
    expect(plain).not.toMatch(/funnel-range|funnel-figures|class="ranges"/);
  });

  it('gives a funnel reader the range control, linking the comparison and the table', async () => {
    for (const headers of [reader, { 'x-internal-key': INTERNAL_KEY }]) {
      const res = await get('/flows', headers);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(res.text).toContain('<a href="/flows?since=1h">Ultima ora</a>');
      expect(res.text).toContain('<a href="/flows?since=7d">Ultimi 7 giorni</a>');
      expect(res.text).toContain(
        '<a href="/flows/funnel?since=24h&amp;compare=previous">Confronta con il periodo precedente</a>',
      );
      expect(res.text).not.toContain('data-figures=');
      expect(res.text).toContain('<img src="/flows/phone-login.svg"');
    }
    // The sandbox is a reader: its people and upstreams are fake.
    expect((await request(sandbox.server).get('/flows')).text).toContain('<ul class="ranges">');
  });

  it('draws the chosen range’s figures under each diagram and on it', async () => {
    const res = await get('/flows?since=1h', reader);
    expect(res.text).toMatch(/<a href="\/flows\?since=1h" aria-current="page">Ultima ora<\/a>/);
    expect(res.text).toContain('<a href="/flows/funnel?since=1h&amp;compare=previous">');
    expect(res.text).not.toMatch(/<script\b|<style\b|\sstyle=|\son[a-z]+=/i);
    const section = res.text.slice(
      res.text.indexOf('<section class="journey" id="phone-login"'),
      res.text.indexOf('</section>', res.text.indexOf('id="phone-login"')),
    );
    expect(section).toContain('<div class="funnel-figures" data-figures="phone-login">');
    expect(section).toMatch(/data-edge="awaitingPhoneCode>loggedIn">.*<strong class="people">7<\/strong> persone/);
    expect(section).toMatch(
      /<tr data-state="awaitingPhoneCode">\s*<th scope="row">[^<]+(<br><span[^>]*>[^<]*<\/span>)?<\/th>\s*<td class="num" data-figure="arrived">12<\/td>/,
    );
    // The people who went nowhere yet: still within their hour, so in progress, not stopped.
    expect(section).toMatch(
      /<tr data-state="awaitingPhoneCode">[\s\S]*?data-figure="in-progress">5<\/td>[\s\S]*?data-figure="stopped">0 /,
    );
    const src = /<img src="([^"]+)"/.exec(section)![1]!.replace(/&amp;/g, '&');
    expect(src).toMatch(/^\/flows\/phone-login\.svg\?from=\d{13}&to=\d{13}$/);

    const svg = await get(src, reader);
    expect(svg.status).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(svg.headers['cache-control']).toBe('no-store');
    const text = svg.body.toString('utf8');
    expect(text).toMatch(/data-edge="awaitingPhoneCode&gt;loggedIn">.*?<text class="people"[^>]*>7 persone<\/text>/);
    expect(text).toMatch(/data-state="awaitingPhoneCode">.*?data-figure="arrived"[^>]*>arrivati 12</);
    expect(text).toMatch(/data-state="awaitingPhoneCode">.*?data-figure="continued"[^>]*>proseguono 7 \(58,3 %\)</);
    expect(text).toMatch(
      /data-state="awaitingPhoneCode">.*?data-figure="refusal"[^>]*>codice sbagliato: 4 persone \(33,3 %\), 4 volte</,
    );
  });

  it('answers a reader’s malformed range with the usual refusal', async () => {
    const res = await get('/flows?since=forever', reader);
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'since' }] },
    });
  });

  it('links the demo, and the sandbox’s outbox only where they are served', async () => {
    const demoPage = (await get('/flows')).text;
    expect(demoPage).toContain('<a href="/demo">');
    expect(demoPage).not.toContain('href="/_sandbox/');
    const sandboxPage = (await request(sandbox.server).get('/flows')).text;
    expect(sandboxPage).toContain('<a href="/demo">');
    expect(sandboxPage).toContain('<a href="/_sandbox/outbox.html">');
  });
});

/*
 * Where the demo is off (production), /flows and its diagrams are there for a funnel reader only,
 * with or without a range; anyone else finds nothing, as before.
 */
describe('GET /flows with the demo off', () => {
  const READ_KEY = 'funnel-read-key-demo-off';
  const INTERNAL_KEY = 'internal-key-demo-off';
  const { deps, server } = appWith({
    security: { internal_key: INTERNAL_KEY },
    funnel: { read_key: READ_KEY, flush_ms: 0 },
  });
  const reader = { 'x-funnel-key': READ_KEY };
  beforeAll(async () => {
    const entries = await entriesOf([
      ...Array.from({ length: 3 }, () => ({ journey: 'phone-login' })),
      ...Array.from({ length: 2 }, () => ({ journey: 'phone-login', requests: 1 })),
    ]);
    for (const entry of entries) deps.funnel.add(entry);
  });
  afterAll(() => deps.close());
  const get = (path: string, headers: Record<string, string> = {}) => request(server).get(path).set(headers);
  const hour = () => `from=${Date.now() - 3_600_000}&to=${Date.now()}`;

  it('refuses anyone else the page, its stylesheet and its diagrams as a path that does not exist, whatever the query', async () => {
    for (const headers of [{}, { 'x-funnel-key': 'wrong' }, { 'x-internal-key': 'wrong' }] as Array<
      Record<string, string>
    >) {
      for (const path of [
        '/flows',
        '/flows?since=1h',
        '/flows/flows.css',
        '/flows/phone-login.svg',
        `/flows/phone-login.svg?${hour()}`,
        '/demo',
      ]) {
        const res = await get(path, headers);
        expect({ path, status: res.status, reason: res.body.data?.reason }).toEqual({
          path,
          status: 404,
          reason: 'unknown_action',
        });
      }
    }
  });

  it('gives a funnel reader the page with the range, its stylesheet, and the diagrams with and without figures', async () => {
    for (const headers of [reader, { 'x-internal-key': INTERNAL_KEY }]) {
      const page = await get('/flows?since=1h', headers);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(page.text).toContain('<div class="funnel-figures" data-figures="phone-login">');
      const css = await get('/flows/flows.css', headers);
      expect([css.status, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8']);

      const plain = await get('/flows/phone-login.svg', headers);
      expect(plain.status).toBe(200);
      expect(plain.headers['cache-control']).toBe('no-store');
      expect(plain.body.toString('utf8')).toBe(
        atDiagramScale(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'journeys', 'phone-login.svg'), 'utf8')),
      );
      const drawn = await get(`/flows/phone-login.svg?${hour()}`, headers);
      expect([drawn.status, drawn.headers['content-type']]).toEqual([200, 'image/svg+xml; charset=utf-8']);
      expect(drawn.headers['content-security-policy']).toContain("default-src 'none'");
      expect(drawn.body.toString('utf8')).toMatch(
        /data-edge="awaitingPhoneCode&gt;loggedIn">.*?<text class="people"[^>]*>3 persone<\/text>/,
      );
      // With figures the viewBox grows: the image is sized from that one, at the same scale.
      const grown = /<svg[^>]*>/.exec(drawn.body.toString('utf8'))![0];
      const view = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"/.exec(grown)!;
      expect(grown).toMatch(
        new RegExp(`^<svg width="${Math.ceil(Number(view[1]))}" height="${Math.ceil(Number(view[2]))}" `),
      );
    }
  });

  it('links neither the demo nor the sandbox’s outbox, which are not served', async () => {
    const html = (await get('/flows', reader)).text;
    expect(html).not.toMatch(/href="\/demo|href="\/_sandbox/);
    expect(html).toContain('<a href="/flows/funnel">');
    expect((await get('/demo', reader)).status).toBe(404);
  });
});
