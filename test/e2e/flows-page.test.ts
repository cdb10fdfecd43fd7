import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { JOURNEY_IDS, LABELS } from '../../machines';
import { useE2e, withPage } from './harness';

/*
 * GET /flows in headless Chromium against the service on the sandbox: the journeys for product
 * and QA, each with its rendered diagram (an SVG image that actually loads), the phone login's
 * step table, and no console error (a CSP violation is one).
 */

const e2e = useE2e();

describe('the journeys page', () => {
  it('shows every journey with its SVG diagram, and the phone login’s steps', async () => {
    await withPage(e2e(), 'flows page', async ({ page }) => {
      await page.goto(`${e2e().service.url}/flows`);
      expect(await page.locator('h1').innerText()).toContain('Percorsi di accesso');

      // Every journey, in the words of machines/diagrams/labels.ts, linked from the index.
      expect(await page.locator('section.journey h2').allInnerTexts()).toEqual(
        JOURNEY_IDS.map((id) => LABELS.journeys[id]),
      );
      expect(
        await page.locator('#journey-index a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
      ).toEqual(JOURNEY_IDS.map((id) => `#${id}`));

      // One SVG per journey, loaded and drawn.
      for (const id of JOURNEY_IDS) {
        const img = page.locator(`section#${id} figure.diagram img`);
        await img.scrollIntoViewIfNeeded();
        await page.waitForFunction((selector) => {
          const el = (
            globalThis as unknown as {
              document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null };
            }
          ).document.querySelector(selector);
          return el !== null && el.complete && el.naturalWidth > 0;
        }, `section#${id} figure.diagram img`);
        expect({ id, src: await img.getAttribute('src'), visible: await img.isVisible() }).toEqual({
          id,
          src: `/flows/${id}.svg`,
          visible: true,
        });
        expect((await img.boundingBox())!.height).toBeGreaterThan(100);
      }

      // The phone login's step table: the start screen, 14 and 90, with what leads there.
      const rows = page.locator('section#phone-login table.steps tbody tr');
      expect(await rows.count()).toBe(3);
      const cells = async (i: number) => (await rows.nth(i).locator('td').allInnerTexts()).map((t) => t.trim());
      expect(await cells(0)).toEqual([
        '–',
        'Accedi o registrati',
        expect.stringContaining('email o telefono'),
        'inizio del percorso',
      ]);
      expect(await cells(1)).toEqual([
        '14',
        'Inserisci il codice SMS',
        expect.stringContaining('otp_sms'),
        '«inserisce il telefono» FeLogin',
      ]);
      expect(await cells(2)).toEqual([
        '90',
        'Accesso effettuato',
        expect.stringContaining('success'),
        '«invia il codice» FeVerifyOtp',
      ]);

      // Its refusals and its example requests, one click away, recorded by Mario.
      expect(await page.locator('section#phone-login table.refusals').innerText()).toContain('OTP non valido.');
      expect(await page.locator('section#phone-login pre.request').first().isVisible()).toBe(false);
      await page.locator('section#phone-login details.examples summary').click();
      expect(await page.locator('section#phone-login p.person').innerText()).toContain(
        'Mario Rossi (uid PNIa7Xk2mR0ssi, mario.rossi@example.com, +393331234567)',
      );
      const requests = page.locator('section#phone-login pre.request');
      expect(await requests.count()).toBe(2);
      expect(await requests.nth(1).innerText()).toContain('POST /FeVerifyOtp');
      expect(await page.locator('section#phone-login pre.answer').nth(1).innerText()).toContain('"next_step": 90');
    });
  }, 30_000);

  /*
   * The rendered height of a diagram's labels on /flows: the height of a screen's name in the SVG
   * (its own units, measured in the SVG opened alone) times the scale the page draws that image at
   * (the image's width on the page over the SVG's viewBox width).
   */
  async function labelHeights(
    page: Page,
    id: string,
  ): Promise<{ id: string; screen: number; action: number; scale: number }> {
    const img = page.locator(`section#${id} figure.diagram img`);
    await img.scrollIntoViewIfNeeded();
    await page.waitForFunction((selector) => {
      const el = (
        globalThis as unknown as {
          document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null };
        }
      ).document.querySelector(selector);
      return el !== null && el.complete && el.naturalWidth > 0;
    }, `section#${id} figure.diagram img`);
    const drawnWidth = (await img.boundingBox())!.width;
    const svg = await page.context().newPage();
    try {
      await svg.goto(`${e2e().service.url}/flows/${id}.svg`);
      const measured = await svg.evaluate(() => {
        type Box = { height: number };
        type El = { getBBox(): Box; getAttribute(name: string): string | null };
        const doc = (globalThis as unknown as { document: { querySelector(s: string): El | null } }).document;
        const viewBox = doc.querySelector('svg')!.getAttribute('viewBox')!.split(' ').map(Number);
        // A screen's name (a node's first line) and a user's action (an arrow's label), in the SVG's units.
        const screen =
          doc.querySelector('g.node:not(.note) text tspan.text-outer-tspan') ?? doc.querySelector('g.node text');
        const action =
          doc.querySelector('g.edgeLabel text tspan.text-outer-tspan') ?? doc.querySelector('g.edgeLabel text');
        return { width: viewBox[2]!, screen: screen!.getBBox().height, action: action!.getBBox().height };
      });
      const scale = drawnWidth / measured.width;
      return { id, screen: measured.screen * scale, action: measured.action * scale, scale };
    } finally {
      await svg.close();
    }
  }

  it('draws every diagram at one scale: a short journey’s labels are as tall as a long one’s', async () => {
    await withPage(e2e(), 'flows diagrams one text size', async ({ page }) => {
      await page.goto(`${e2e().service.url}/flows`);
      // The shortest journeys and the tallest: the cap in height used to shrink only the tall ones.
      const ids = [
        'password',
        'phone-login',
        'email-login-with-phone',
        'email-registration',
        'phone-registration',
        'email-login-phone-declined',
      ] as const;
      const measured = [];
      for (const id of ids) measured.push(await labelHeights(page, id));
      const screens = measured.map((m) => m.screen);
      const actions = measured.map((m) => m.action);
      // One text size, within a pixel, and a readable one (Mermaid's 15 px).
      expect(Math.max(...screens) - Math.min(...screens)).toBeLessThanOrEqual(1);
      expect(Math.max(...actions) - Math.min(...actions)).toBeLessThanOrEqual(1);
      expect(Math.min(...screens)).toBeGreaterThanOrEqual(14);
      expect(Math.max(...screens)).toBeLessThanOrEqual(22);
      // A look for people: the page as a browser draws it.
      const artifacts = join(__dirname, '..', '..', 'test-artifacts');
      await mkdir(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, 'flows-page.png'), fullPage: true });
      const { height } = await page.evaluate(() => ({
        height: (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document
          .documentElement.scrollHeight,
      }));
      process.stdout.write(
        `flows page: ${height} px tall; label heights ${JSON.stringify(measured.map((m) => [m.id, Math.round(m.screen * 10) / 10, Math.round(m.action * 10) / 10]))}\n`,
      );
    });
  }, 60_000);
});
