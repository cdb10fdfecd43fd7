import request from 'supertest';
import { startSecurityApp, type SecurityApp } from '../security/support';
import { testApp, testDeps } from '../support/app';
import { mountDemo } from '../../src/http/demo';
import { mountSandboxRoutes } from '../../src/http/sandbox-routes';
import { mountFunnel } from '../../src/http/funnel';

/*
 * The pages a person reads in the sandbox (the demo, /flows, the outbox page) are each in one
 * language, Italian, whatever the browser asks: no English sentence outside code samples.
 */

/** The page's words a reader sees: no markup, no code samples, no attribute values, no quotation marked as English (the contract's words). */
const prose = (html: string) =>
  html
    .replace(/<(script|style|pre|code)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<q lang="en">[\s\S]*?<\/q>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z]+;|&#\d+;/g, ' ');

const ENGLISH = /\b(the|and|with|your|you|code sent|newest|refreshes|in the contract|steps passed|request|answer)\b/i;

describe('pages in one language', () => {
  let app: SecurityApp;
  beforeAll(async () => {
    app = await startSecurityApp();
    await app.post('otp_generate', { uid: '+393331234567' });
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(['/demo', '/flows', '/flows/funnel?since=7d&compare=previous', '/_sandbox/outbox.html'])(
    '%s is Italian, also to an English browser',
    async (path) => {
      const deps = testDeps({
        ...app.sandbox.config,
        demo: { ...app.sandbox.config.demo, enabled: true },
        funnel: { ...app.sandbox.config.funnel, read_key: 'funnel-reader' },
      });
      const server = testApp(deps, {
        routes: (router) => (
          mountSandboxRoutes(router, { outbox: app.sandbox.outbox, mayReadJourneys: () => true }),
          mountFunnel(router, deps),
          mountDemo(router, deps)
        ),
      }).callback();
      const page = await request(server)
        .get(path)
        .set('Accept-Language', 'en-US,en;q=0.9')
        .set('x-funnel-key', 'funnel-reader');
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<html lang="it"/);
      const words = prose(page.text);
      expect(words.match(ENGLISH)).toBeNull();
      await deps.close();
    },
  );
});
