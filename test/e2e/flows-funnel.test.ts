import { eventually } from '../support/eventually';
import { LOW_CONTRAST, phoneLogin, useE2e, withPage } from './harness';

/*
 * GET /flows with the funnel, in headless Chromium against the sandbox (a funnel reader), after
 * a phone login: held to /demo's and /flows/funnel's standard. No console error (a CSP violation
 * is one); the keyboard alone reaches the range links and the comparison in order, each with a
 * visible focus ring, and follows them; every text of the page at 4.5:1 on what is behind it,
 * and so every text drawn on the diagram (opened as the browser renders it).
 */

const e2e = useE2e({ funnel: { flush_ms: 0 } });

const ORDER = [
  'Ultima ora',
  'Ultimo giorno',
  'Ultimi 7 giorni',
  'Confronta con il periodo precedente',
  'Le stesse cifre in tabella',
];

/** The focused element's text and whether its focus shows (an outline of 2px at least). */
const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return { text: '', ring: false };
  const style = getComputedStyle(el);
  return { text: el.textContent.trim(), ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
})()`;

/** In the SVG document: each text drawn by the funnel, with its contrast on the shape behind it. */
const DRAWN_CONTRAST = `(() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  return [...document.querySelectorAll('.funnel-figures text')].map((text) => {
    const behind = text.parentNode.querySelector('rect');
    const a = lum(rgb(getComputedStyle(text).fill)), b = lum(rgb(getComputedStyle(behind).fill));
    return { text: text.textContent, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
  });
})()`;

describe('/flows with the funnel', () => {
  it('draws the phone login on its diagram, is used with the keyboard, and is readable', async () => {
    const { url } = e2e().service;
    await phoneLogin(url, '+393331234567');
    await withPage(e2e(), 'flows funnel', async ({ page }) => {
      await page.goto(`${url}/flows`);
      expect(await page.locator('#funnel-title').innerText()).toBe('Cosa fanno le persone');

      // Keyboard only: the range links and the comparison, in order, each with its focus ring.
      const reached: string[] = [];
      for (let i = 0; i < 40 && reached.length < ORDER.length; i++) {
        await page.keyboard.press('Tab');
        const { text, ring } = await page.evaluate<{ text: string; ring: boolean }>(FOCUSED);
        if (!ORDER.includes(text)) continue;
        expect({ text, ring }).toEqual({ text, ring: true });
        reached.push(text);
      }
      expect(reached).toEqual(ORDER);

      // Back to «Ultima ora» and follow it with Enter.
      await page.locator('a', { hasText: 'Ultima ora' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/flows\?since=1h$/);
      await eventually(async () => {
        await page.goto(`${url}/flows?since=1h`);
        const row = page.locator('section#phone-login .funnel-figures tr[data-state="awaitingPhoneCode"]');
        expect(await row.locator('[data-figure="arrived"]').innerText()).toBe('1');
      });
      expect(await page.locator('a[aria-current="page"]').innerText()).toBe('Ultima ora');
      expect(
        await page.locator('section#phone-login [data-edge="awaitingPhoneCode>loggedIn"] .people').innerText(),
      ).toBe('1');
      expect(await page.evaluate(LOW_CONTRAST)).toEqual([]);

      // The diagram with its figures loaded as an image (its own CSP, nothing refused).
      const img = page.locator('section#phone-login figure.diagram img');
      await eventually(async () =>
        expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0),
      );
      const src = await img.evaluate((el) => (el as unknown as { src: string }).src);
      expect(new URL(src).search).toMatch(/^\?from=\d+&to=\d+$/);

      // The comparison, reached and followed with the keyboard.
      await page.locator('a', { hasText: 'Confronta con il periodo precedente' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/flows\/funnel\?since=1h&compare=previous$/);
      expect(await page.locator('#compare-title').count()).toBe(1);

      // Every text drawn on the diagram, as the browser renders the SVG.
      await page.goto(src);
      expect(await page.locator('.funnel-edge[data-edge="awaitingPhoneCode>loggedIn"] .people').textContent()).toBe(
        '1 persona',
      );
      const drawn = await page.evaluate<Array<{ text: string; ratio: number }>>(DRAWN_CONTRAST);
      expect(drawn.length).toBeGreaterThan(6);
      expect(drawn.filter((d) => d.ratio < 4.5)).toEqual([]);
    });
  }, 60_000);
});
