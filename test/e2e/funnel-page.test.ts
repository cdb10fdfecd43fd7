import { LABELS } from '../../machines';
import { eventually } from '../support/eventually';
import { useE2e, withPage } from './harness';

/*
 * GET /flows/funnel in headless Chromium against the sandbox, after a phone login: the figures
 * on the phone login's journey, the range links reached and followed with the keyboard alone,
 * every text at 4.5:1 contrast at least on what is behind it, and no console error (a CSP
 * violation is one).
 */

const e2e = useE2e({ funnel: { flush_ms: 0 } });
const PHONE = '+393331234567';

async function phoneLogin(url: string): Promise<void> {
  const post = (action: string, body: Record<string, unknown>) =>
    fetch(`${url}/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ data: Record<string, unknown> }>);
  await post('FeLogin', { identifier: PHONE });
  const outbox = (await (await fetch(`${url}/_sandbox/outbox?to=${encodeURIComponent(PHONE)}`)).json()) as { data: { code: string } };
  const done = await post('FeVerifyOtp', { flow: 'phone', phone: PHONE, otp_code: outbox.data.code });
  expect(done.data.next_step).toBe(90);
}

/** Every text element whose contrast on its (first opaque) background is below 4.5:1. */
const LOW_CONTRAST = `(() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0) return c; } return [255, 255, 255]; };
  const low = [];
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    const a = lum(rgb(getComputedStyle(el).color)), b = lum(background(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) low.push(el.tagName + ' ' + ratio.toFixed(2) + ' ' + el.textContent.trim().slice(0, 30));
  }
  return low;
})()`;

describe('the funnel page', () => {
  it('shows the phone login counted, is used with the keyboard, and is readable', async () => {
    const { url } = e2e().service;
    await phoneLogin(url);
    await withPage(e2e(), 'funnel page', async ({ page }) => {
      await eventually(async () => {
        await page.goto(`${url}/flows/funnel?since=1h`);
        const row = page.locator('section#phone-login tr[data-state="awaitingPhoneCode"]');
        expect(await row.locator('[data-figure="arrived"]').innerText()).toBe('1');
      });
      expect(await page.locator('section#phone-login h2').innerText()).toBe(LABELS.journeys['phone-login']);
      expect(await page.locator('section#phone-login [data-edge="awaitingPhoneCode>loggedIn"] .people').innerText()).toBe('1');
      expect(await page.evaluate(LOW_CONTRAST)).toEqual([]);

      // Keyboard only: Tab to «Ultimo giorno», Enter follows it.
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        if ((await page.evaluate('document.activeElement && document.activeElement.textContent')) === 'Ultimo giorno') break;
      }
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Ultimo giorno');
      await page.keyboard.press('Enter');
      await page.waitForURL(/since=24h/);
      expect(await page.locator('a[aria-current="page"]').innerText()).toBe('Ultimo giorno');
    });
  }, 60_000);
});
