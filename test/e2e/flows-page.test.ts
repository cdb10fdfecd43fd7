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

      // Every journey, in the words of machines/labels.ts, linked from the index.
      expect(await page.locator('section.journey h2').allInnerTexts()).toEqual(JOURNEY_IDS.map((id) => LABELS.journeys[id]));
      expect(await page.locator('#journey-index a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual(JOURNEY_IDS.map((id) => `#${id}`));

      // One SVG per journey, loaded and drawn.
      for (const id of JOURNEY_IDS) {
        const img = page.locator(`section#${id} figure.diagram img`);
        await img.scrollIntoViewIfNeeded();
        await page.waitForFunction((selector) => {
          const el = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null } }).document.querySelector(selector);
          return el !== null && el.complete && el.naturalWidth > 0;
        }, `section#${id} figure.diagram img`);
        expect({ id, src: await img.getAttribute('src'), visible: await img.isVisible() }).toEqual({ id, src: `/flows/${id}.svg`, visible: true });
        expect((await img.boundingBox())!.height).toBeGreaterThan(100);
      }

      // The phone login's step table: the start screen, 14 and 90, with what leads there.
      const rows = page.locator('section#phone-login table.steps tbody tr');
      expect(await rows.count()).toBe(3);
      const cells = async (i: number) => (await rows.nth(i).locator('td').allInnerTexts()).map((t) => t.trim());
      expect(await cells(0)).toEqual(['–', 'Accedi o registrati', expect.stringContaining('email o telefono'), 'inizio del percorso']);
      expect(await cells(1)).toEqual(['14', 'Inserisci il codice SMS', expect.stringContaining('otp_sms'), '«inserisce il telefono» FeLogin']);
      expect(await cells(2)).toEqual(['90', 'Accesso effettuato', expect.stringContaining('success'), '«invia il codice» FeVerifyOtp']);

      // Its refusals and its example requests.
      expect(await page.locator('section#phone-login table.refusals').innerText()).toContain('OTP non valido.');
      const requests = page.locator('section#phone-login pre.request');
      expect(await requests.count()).toBe(2);
      expect(await requests.nth(1).innerText()).toContain('POST /FeVerifyOtp');
      expect(await page.locator('section#phone-login pre.answer').nth(1).innerText()).toContain('"next_step": 90');
    });
  }, 30_000);
});
