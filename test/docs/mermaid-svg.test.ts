import { renderMermaidSvgs } from '../../scripts/docs/mermaid-svg';

/* The journey SVGs' renderer: the real Mermaid in Debian's Chromium, deterministic, and loud when the browser is missing. */

const SOURCE = 'flowchart TD\n  a("14 · Inserisci il codice SMS") -->|"invia il codice"| b("90 · Accesso effettuato")';

describe('renderMermaidSvgs', () => {
  it('renders with Mermaid itself, the same bytes every time, ids from the diagram’s seed', async () => {
    const first = await renderMermaidSvgs([
      { id: 'journey-test', source: SOURCE },
      { id: 'journey-again', source: SOURCE },
    ]);
    const again = await renderMermaidSvgs([{ id: 'journey-test', source: SOURCE }]);
    const svg = first.get('journey-test')!;
    expect(svg).toMatch(/^<svg [^>]*id="journey-test"/);
    const text = svg.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, '');
    expect(text).toContain('14 · Inserisci il codice SMS');
    expect(text).toContain('invia il codice');
    expect(svg).not.toContain('<foreignObject');
    expect(again.get('journey-test')).toBe(svg);
    expect(first.get('journey-again')).toBe(svg.replaceAll('journey-test', 'journey-again'));
  }, 60_000);

  it('fails, saying how to install it, when Chromium is missing', async () => {
    await expect(
      renderMermaidSvgs([{ id: 'x', source: SOURCE }], { executablePath: '/nonexistent/chromium' }),
    ).rejects.toThrow(/\/nonexistent\/chromium is missing: .*npm ci && npm test.*apt-get/);
  });
});
