import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { phoneLogin, useE2e, withPage } from './harness';

/*
 * /flows, /flows/funnel and /sms with funnel figures and ledger entries present, in headless
 * Chromium at a laptop's 1280 × 800 and a phone's 390 × 844: the page never scrolls sideways (the
 * document is no wider than the viewport); a diagram scales to its column and scrolls inside its
 * own box, and every figure box drawn on it lies inside that drawing; a table wraps or scrolls
 * inside its box. A screenshot of each (the screen, and the phone registration's section) is left
 * in test-artifacts/ to look at.
 */

const e2e = useE2e({ funnel: { flush_ms: 0 } });
const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const PAGES = ['/flows?since=1h', '/flows/funnel?since=1h', '/sms'];

/** The document's width, and every element wider than the viewport that is not inside a box that scrolls sideways. */
const FIT = `(() => {
  const width = window.innerWidth;
  const scrolls = (el) => { for (let p = el.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
  const out = [...document.body.querySelectorAll('*')].filter((el) => { const r = el.getBoundingClientRect(); return r.width > 0 && (r.right > width + 0.5 || r.left < -0.5) && !scrolls(el); });
  return { document: document.documentElement.scrollWidth, viewport: width, outside: out.slice(0, 5).map((el) => el.tagName + '.' + el.className) };
})()`;

/** Each diagram as laid out: its image's address and box, and the box it scrolls in. */
const DIAGRAMS = `[...document.querySelectorAll('figure.diagram img')].map((img) => {
  const figure = img.closest('figure');
  const box = figure.getBoundingClientRect();
  const drawn = img.getBoundingClientRect();
  return { src: img.currentSrc, drawn: { left: drawn.left, right: drawn.right, top: drawn.top, bottom: drawn.bottom, width: drawn.width }, box: { left: box.left, right: box.right, scrollWidth: figure.scrollWidth }, viewport: window.innerWidth };
})`;
interface Laid {
  src: string;
  drawn: { left: number; right: number; top: number; bottom: number; width: number };
  box: { left: number; right: number; scrollWidth: number };
  viewport: number;
}

/**
 * A diagram's figure boxes, read from the SVG the image shows (fetched apart, never parsed in the
 * page: its CSP holds) and scaled as drawn: how many there are, and how many fall outside the
 * drawing; whether the drawing lies within what its box scrolls over, and the box within the viewport.
 */
async function figureBoxes(laid: Laid) {
  const svg = await (await fetch(laid.src)).text();
  const [vx, vy, vw] = /<svg[^>]*?viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"/.exec(svg)!.slice(1).map(Number) as [
    number,
    number,
    number,
  ];
  const scale = laid.drawn.width / vw;
  const { drawn } = laid;
  const boxes = [
    ...svg.matchAll(
      /<g class="funnel-screen"[^>]*>.*?<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"/g,
    ),
  ].map((m) => {
    const [x, y, w, h] = m.slice(1).map(Number) as [number, number, number, number];
    return {
      left: drawn.left + (x - vx) * scale,
      top: drawn.top + (y - vy) * scale,
      right: drawn.left + (x + w - vx) * scale,
      bottom: drawn.top + (y + h - vy) * scale,
    };
  });
  return {
    src: new URL(laid.src).pathname,
    boxes: boxes.length,
    outside: boxes.filter(
      (b) =>
        b.left < drawn.left - 0.5 ||
        b.right > drawn.right + 0.5 ||
        b.top < drawn.top - 0.5 ||
        b.bottom > drawn.bottom + 0.5,
    ).length,
    inScroll: drawn.left >= laid.box.left - 0.5 && drawn.right <= laid.box.left + laid.box.scrollWidth + 0.5,
    boxInView: laid.box.left >= -0.5 && laid.box.right <= laid.viewport + 0.5,
  };
}

describe('the funnel and SMS pages', () => {
  it('fit a laptop and a phone: no sideways page, diagrams and tables scroll inside their own boxes, figure boxes inside their diagram', async () => {
    const { url } = e2e().service;
    await phoneLogin(url, '+393331234567');
    await mkdir(ARTIFACTS, { recursive: true });
    await withPage(e2e(), 'pages fit', async ({ page }) => {
      // The figures are there before anything is measured.
      await eventually(async () => {
        await page.goto(`${url}/flows/funnel?since=1h`);
        expect(
          await page
            .locator('section#phone-login tr[data-state="awaitingPhoneCode"] [data-figure="arrived"]')
            .innerText(),
        ).toBe('1');
      });
      for (const size of SIZES) {
        await page.setViewportSize(size);
        for (const path of PAGES) {
          await page.goto(`${url}${path}`);
          await page.waitForLoadState('load');
          const name = `fit-${size.width}-${path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.png`;
          await page.screenshot({ path: join(ARTIFACTS, name) });
          if (path.startsWith('/flows'))
            await page
              .locator('section#phone-registration')
              .screenshot({ path: join(ARTIFACTS, name.replace('.png', '-phone-registration.png')) });
          const fit = await page.evaluate<{ document: number; viewport: number; outside: string[] }>(FIT);
          expect({ path, size: size.width, ...fit }).toEqual({
            path,
            size: size.width,
            document: fit.viewport,
            viewport: size.width,
            outside: [],
          });
          if (!path.startsWith('/flows?')) continue;
          const diagrams = await Promise.all((await page.evaluate<Laid[]>(DIAGRAMS)).map(figureBoxes));
          expect(diagrams.length).toBeGreaterThan(5);
          expect(diagrams.filter((d) => d.boxes > 0).length).toBe(diagrams.length);
          for (const d of diagrams)
            expect({ ...d, size: size.width }).toEqual({
              ...d,
              size: size.width,
              outside: 0,
              inScroll: true,
              boxInView: true,
            });
        }
      }
    });
  }, 120_000);
});
