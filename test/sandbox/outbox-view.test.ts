import request from 'supertest';
import { mountSandboxRoutes, OUTBOX_PAGE_CSP } from '../../src/http/sandbox-routes';
import { Outbox } from '../../src/sandbox/outbox';
import { testApp, testDeps } from '../support/app';

/*
 * The sandbox outbox for people: one recipient's messages (`?to=`) with the newest code at
 * `data.code`, and GET /_sandbox/outbox.html, the newest code per recipient, escaped, under a
 * CSP that allows nothing but its own inline style.
 */

describe('the sandbox outbox', () => {
  const deps = testDeps();
  const outbox = new Outbox();
  const app = testApp(deps, {
    routes: (router) => mountSandboxRoutes(router, { outbox, mayReadJourneys: () => true }),
  }).callback();
  afterAll(() => deps.close());

  beforeEach(() => {
    outbox.clear();
    outbox.add({ channel: 'sms', to: '+393331234567', body: 'codice 111111', code: '111111' });
    outbox.add({
      channel: 'email',
      to: 'Mario.Rossi@example.com',
      subject: 'Il tuo codice',
      body: 'codice 222222',
      code: '222222',
    });
    outbox.add({ channel: 'collector', to: 'uid-mario', body: '{}' });
    outbox.add({ channel: 'sms', to: '+393331234567', body: 'codice 333333', code: '333333' });
    outbox.add({ channel: 'sms', to: '+393339999999', body: 'codice 444444', code: '444444' });
  });

  it('answers every message without ?to=, as before', async () => {
    const res = await request(app).get('/_sandbox/outbox');
    expect(res.body.data.messages.map((m: { code?: string }) => m.code ?? null)).toEqual([
      '444444',
      '333333',
      null,
      '222222',
      '111111',
    ]);
    expect(res.body.data.code).toBeUndefined();
  });

  it('answers one recipient newest first, the newest code at data.code', async () => {
    const res = await request(app).get('/_sandbox/outbox').query({ to: '+39 333 123 4567' });
    expect(res.body).toMatchObject({ success: true, data: { code: '333333' } });
    expect(res.body.data.messages.map((m: { code: string }) => m.code)).toEqual(['333333', '111111']);
    expect((await request(app).get('/_sandbox/outbox').query({ to: 'mario.rossi@EXAMPLE.com' })).body.data.code).toBe(
      '222222',
    );
    expect((await request(app).get('/_sandbox/outbox').query({ to: 'uid-mario' })).body.data).toMatchObject({
      code: null,
      messages: [{ channel: 'collector' }],
    });
    expect((await request(app).get('/_sandbox/outbox').query({ to: '+393330000000' })).body.data).toEqual({
      to: '+393330000000',
      code: null,
      messages: [],
    });
  });

  it('serves the newest code per recipient as a page, escaped, under a strict CSP', async () => {
    outbox.add({
      channel: 'email',
      to: '"><script>alert(1)</script>@example.com',
      subject: '<img src=x onerror=alert(2)>',
      body: 'codice 555555',
      code: '555555',
    });
    const res = await request(app).get('/_sandbox/outbox.html');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(OUTBOX_PAGE_CSP);
    expect(OUTBOX_PAGE_CSP).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$/,
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
    // One row per recipient, its newest code only, newest first; the collector has no code.
    const codes = [...res.text.matchAll(/<td class="code">(\d+)<\/td>/g)].map((m) => m[1]);
    expect(codes).toEqual(['555555', '444444', '333333', '222222']);
    expect(res.text).not.toContain('<script>');
    expect(res.text).not.toContain('<img');
    expect(res.text).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;@example.com');
    expect(res.text).toContain('&lt;img src=x onerror=alert(2)&gt;');
  });

  it('says so when no code was sent yet', async () => {
    outbox.clear();
    expect((await request(app).get('/_sandbox/outbox.html')).text).toContain('Nessun codice inviato finora.');
  });
});
