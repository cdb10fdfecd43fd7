import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { JOURNEY_IDS, journeyDiagrams, replayJourney, journeys } from '../../../machines';
import { mountDemo } from '../../../src/http/demo';
import { exampleAnswer } from '../../../src/http/demo/flows';
import { testApp, testConfig, testDeps } from '../../support/app';

/* GET /flows through the real app: the journeys for product and QA, served where /demo is, under the same CSP. */

function appWith(overrides: Record<string, unknown>) {
  const deps = testDeps(testConfig(overrides));
  return { deps, server: testApp(deps, { routes: (router) => mountDemo(router, deps) }).callback() };
}

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
      expect({ path, status: res.status, reason: res.body.data?.reason }).toEqual({ path, status: 404, reason: 'unknown_action' });
    }
  });

  it('has no script and no inline style', async () => {
    const html = (await request(sandbox.server).get('/flows')).text;
    expect(html).not.toMatch(/<script\b|<style\b|\sstyle=|\son[a-z]+=/i);
    expect((await request(sandbox.server).get('/flows/flows.css')).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('shows every journey with its title, its diagram, its steps, its refusals and its requests', async () => {
    const html = (await request(sandbox.server).get('/flows')).text;
    for (const diagram of await journeyDiagrams()) {
      const section = html.slice(html.indexOf(`<section class="journey" id="${diagram.id}"`), html.indexOf('</section>', html.indexOf(`id="${diagram.id}"`)));
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

  it('serves each journey’s SVG as committed in docs/journeys/, as an image that loads nothing', async () => {
    for (const id of JOURNEY_IDS) {
      const res = await request(sandbox.server).get(`/flows/${id}.svg`);
      expect({ id, status: res.status, type: res.headers['content-type'] }).toEqual({ id, status: 200, type: 'image/svg+xml; charset=utf-8' });
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.body.toString('utf8')).toBe(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'journeys', `${id}.svg`), 'utf8'));
    }
  });

  it('shapes the example answers as the Fe* actions do, proofs shown by what they bind', async () => {
    const replayed = await replayJourney(journeys.find((j) => j.id === 'phone-registration')!);
    const atEmail = exampleAnswer(replayed[1]!.answer) as { success: boolean; data: Record<string, unknown> };
    expect(atEmail).toMatchObject({ success: true, error: null, data: { next_step: 24, flow: 'phone_register' } });
    expect(atEmail.data.phone_proof).toMatch(/^‹prova firmata: phone; .*phone \+393331234567/);
    const done = exampleAnswer(replayed[4]!.answer) as { data: Record<string, unknown> };
    expect(done.data).toMatchObject({ next_step: 90, done: true, screen: 'success', access_token: expect.any(String) });
  });
});
