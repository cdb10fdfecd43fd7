import { LABELS } from '../../machines';
import { eventually } from '../support/eventually';
import { LOW_CONTRAST, phoneLogin, useE2e, withPage } from './harness';

/*
 * GET /flows/funnel in headless Chromium against the sandbox, after a phone login: the figures
 * on the phone login's journey, the range links reached and followed with the keyboard alone,
 * every text at 4.5:1 contrast at least on what is behind it, and no console error (a CSP
 * violation is one).
 */

const e2e = useE2e({ funnel: { flush_ms: 0 } });

describe('the funnel page', () => {
  it('shows the phone login counted, is used with the keyboard, and is readable', async () => {
    const { url } = e2e().service;
    await phoneLogin(url, '+393331234567');
    await withPage(e2e(), 'funnel page', async ({ page }) => {
      await eventually(async () => {
        await page.goto(`${url}/flows/funnel?since=1h`);
        const row = page.locator('section#phone-login tr[data-state="awaitingPhoneCode"]');
        expect(await row.locator('[data-figure="arrived"]').innerText()).toBe('1');
      });
      expect(await page.locator('section#phone-login h2').innerText()).toBe(LABELS.journeys['phone-login']);
      expect(
        await page.locator('section#phone-login [data-edge="awaitingPhoneCode>loggedIn"] .people').innerText(),
      ).toBe('1');
      expect(await page.evaluate(LOW_CONTRAST)).toEqual([]);

      // Keyboard only: Tab to «Ultimo giorno», Enter follows it.
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        if ((await page.evaluate('document.activeElement && document.activeElement.textContent')) === 'Ultimo giorno')
          break;
      }
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Ultimo giorno');
      await page.keyboard.press('Enter');
      await page.waitForURL(/since=24h/);
      expect(await page.locator('a[aria-current="page"]').innerText()).toBe('Ultimo giorno');
    });
  }, 60_000);
});
