import { existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

/*
 * Mermaid diagrams rendered to SVG by the real Mermaid renderer: the `mermaid` package's browser
 * bundle loaded into Debian's Chromium (driven by playwright-core, as the e2e tests do; never a
 * downloaded browser), one browser for every diagram. The output is deterministic so that
 * committed SVGs can be compared with fresh ones: ids from a seed (`deterministicIds`), one
 * theme, one font (DejaVu Sans, whose metrics lay the text out), numbers rounded.
 */

const CHROMIUM = '/usr/bin/chromium';
/** The font the diagrams are laid out with: Debian's fonts-dejavu-core (fontconfig depends on it, chromium brings it). */
const DIAGRAM_FONT_FILE = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const FONT_FAMILY = '"DejaVu Sans", sans-serif';

export interface MermaidSource {
  /** The SVG's id, and the seed of the ids inside it. */
  id: string;
  source: string;
}

const MERMAID_CONFIG = {
  startOnLoad: false,
  securityLevel: 'strict',
  deterministicIds: true,
  theme: 'base',
  look: 'classic',
  handDrawnSeed: 1,
  fontFamily: FONT_FAMILY,
  themeVariables: {
    fontFamily: FONT_FAMILY,
    fontSize: '15px',
    primaryColor: '#e7f1ff',
    primaryBorderColor: '#3178c6',
    primaryTextColor: '#10243e',
    lineColor: '#44546a',
    edgeLabelBackground: '#ffffff',
    titleColor: '#10243e',
  },
  // An arrow's label stands on white, not across the line.
  themeCSS: '.edgeLabel rect.background { fill: #ffffff; opacity: 0.9; }',
  // SVG text, no HTML in foreignObject: the files read the same as <img>, on GitHub and in any viewer.
  htmlLabels: false,
  flowchart: { htmlLabels: false, curve: 'basis', wrappingWidth: 260, padding: 12, nodeSpacing: 40, rankSpacing: 45 },
};

/** Rounds every decimal number to two places: a last-digit difference in layout arithmetic changes nothing visible. */
const roundNumbers = (svg: string) => svg.replace(/-?\d+\.\d{3,}/g, (n) => String(Math.round(Number(n) * 100) / 100));

/** Renders every source in one headless Chromium. Throws, saying how to install it, when Chromium or the font is missing. */
export async function renderMermaidSvgs(
  sources: readonly MermaidSource[],
  options: { executablePath?: string } = {},
): Promise<Map<string, string>> {
  const executablePath = options.executablePath ?? CHROMIUM;
  if (!existsSync(executablePath)) {
    throw new Error(
      `${executablePath} is missing: the journey diagrams are rendered in Debian's chromium package. Run the README test command (npm ci && npm test), which installs it with apt-get.`,
    );
  }
  if (!existsSync(DIAGRAM_FONT_FILE)) {
    throw new Error(
      `${DIAGRAM_FONT_FILE} is missing: the journey diagrams are laid out in DejaVu Sans. Run the README test command (npm ci && npm test), which installs Debian's fonts-dejavu-core with apt-get.`,
    );
  }
  const bundle = readFileSync(require.resolve('mermaid/dist/mermaid.min.js'), 'utf8');
  const browser = await chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--font-render-hinting=none',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, deviceScaleFactor: 1 });
    await page.setContent('<!doctype html><html lang="it"><head><meta charset="utf-8"></head><body></body></html>');
    await page.addScriptTag({ content: bundle });
    const svgs = new Map<string, string>();
    for (const { id, source } of sources) {
      const svg = await page.evaluate(
        async ({ id, source, config }) => {
          const mermaid = (
            globalThis as unknown as {
              mermaid: { initialize(c: object): void; render(id: string, text: string): Promise<{ svg: string }> };
            }
          ).mermaid;
          mermaid.initialize({ ...config, deterministicIDSeed: id });
          return (await mermaid.render(id, source)).svg;
        },
        { id, source, config: MERMAID_CONFIG },
      );
      svgs.set(id, `${roundNumbers(svg)}\n`);
    }
    return svgs;
  } finally {
    await browser.close();
  }
}
