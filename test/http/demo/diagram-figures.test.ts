import { journeyDiagrams, type JourneyDiagram } from '../../../machines';
import { SCREEN_SECONDS_BUCKETS } from '../../../src/core/metrics';
import { createMemoryFunnelStore } from '../../../src/domain/funnel/memory-store';
import { alignRange } from '../../../src/domain/funnel/store';
import { funnelFigures, type FunnelFigures } from '../../../src/domain/funnel/figures';
import { entriesOf } from '../../support/funnel-journeys';
import { diagramLayout, drawFigures, FIGURE_COLOURS, labelIds } from '../../../src/http/demo/diagram-figures';
import { percent } from '../../../src/http/demo/funnel-format';
import { journeySvg } from '../../../src/http/demo/flows';

/*
 * The funnel's figures laid over the committed journey SVGs (GET /flows/<id>.svg with a range):
 * every arrow and every screen of every journey is found where Mermaid drew it, each arrow gets
 * its people and each screen its box, the picture grows to hold them, and the colours read.
 */

let diagrams: JourneyDiagram[];
let figures: FunnelFigures;
beforeAll(async () => {
  diagrams = await journeyDiagrams();
  // On each journey, fewer people at each step than at the one before, so a label drawn on the wrong arrow shows.
  const plans: Array<{ journey: string; requests: number; wrong?: number[] }> = diagrams.flatMap((d) =>
    d.replayed.flatMap((_, stop) =>
      Array.from({ length: stop + 1 }, () => ({ journey: d.id as string, requests: stop + 1 })),
    ),
  );
  // On the phone login's code screen: 3 people type a wrong code (30 times), 2 let a code expire; 3 s on each screen.
  plans.push(...Array.from({ length: 3 }, () => ({ journey: 'phone-login', requests: 1, wrong: [10] })));
  const entries = await entriesOf(plans);
  for (let i = 0; i < 2; i++)
    entries.push({
      ...entries[entries.length - 1]!,
      once: [{ field: `R|enteringIdentifier.14|expired` }],
      always: ['r|enteringIdentifier.14|expired'],
      journey: `${'x'.repeat(15)}${i}`,
      at: Date.now(),
    });
  const store = createMemoryFunnelStore();
  await store.add(entries, Date.now());
  figures = funnelFigures(
    diagrams,
    await store.read(alignRange(Date.now() - 3_600_000, Date.now(), Date.now()), Date.now()),
  );
});

const svgOf = (id: string) => {
  const svg = journeySvg(id);
  if (svg === undefined) throw new Error(`docs/journeys/${id}.svg is missing: run npm run docs`);
  return svg;
};
const figuresOf = (id: string) => figures.journeys.find((j) => j.id === id)!;

describe('the funnel drawn on the journey diagrams', () => {
  it('finds every arrow label and every screen of every journey in its committed SVG', () => {
    for (const diagram of diagrams) {
      const layout = diagramLayout(svgOf(diagram.id), diagram.id);
      const missingLabels = labelIds(diagram).filter((id) => !layout.labels.has(id));
      const missingScreens = diagram.screens.map((s) => s.state).filter((state) => !layout.nodes.has(state));
      expect({ journey: diagram.id, missingLabels, missingScreens }).toEqual({
        journey: diagram.id,
        missingLabels: [],
        missingScreens: [],
      });
      for (const node of layout.nodes.values()) expect(node.halfWidth).toBeGreaterThan(20);
    }
  });

  it('puts the people on every arrow and the figures beside every screen', () => {
    for (const diagram of diagrams) {
      const drawn = drawFigures(svgOf(diagram.id), diagram, figuresOf(diagram.id));
      const edges = [
        ...drawn.matchAll(/<g class="funnel-edge" data-edge="([^"]+)">.*?<text class="people"[^>]*>([^<]+)<\/text>/g),
      ].map((m) => [m[1]!.replace('&gt;', '>'), m[2]]);
      expect(edges).toEqual(
        figuresOf(diagram.id).edges.map((e) => [
          `${e.from}>${e.to}`,
          `${e.people} ${e.people === 1 ? 'persona' : 'persone'}`,
        ]),
      );
      const screens = [...drawn.matchAll(/<g class="funnel-screen" data-state="([^"]+)">/g)].map((m) => m[1]);
      expect(screens.sort()).toEqual(diagram.screens.map((s) => s.state).sort());
    }
  });

  it('writes each screen’s conversion, drop-off, times and top refusals in product’s words', () => {
    const diagram = diagrams.find((d) => d.id === 'phone-login')!;
    const drawn = drawFigures(svgOf('phone-login'), diagram, figuresOf('phone-login'));
    const box = drawn.slice(
      drawn.indexOf('<g class="funnel-screen" data-state="awaitingPhoneCode">'),
      drawn.indexOf('</g>', drawn.indexOf('data-state="awaitingPhoneCode"')),
    );
    const line = (figure: string) =>
      [...box.matchAll(new RegExp(`data-figure="${figure}"[^>]*>([^<]+)<`, 'g'))].map((m) => m[1]);
    const screen = figuresOf('phone-login').screens.find((s) => s.state === 'awaitingPhoneCode')!;
    expect(line('arrived')).toEqual([`arrivati ${screen.arrived}`]);
    expect(line('continued')[0]).toMatch(new RegExp(`^proseguono ${screen.continued} \\(\\d+(,\\d)? %\\)$`));
    expect(line('elsewhere')).toEqual([`altrove ${screen.elsewhere}`]);
    expect(screen.elsewhere).toBeGreaterThan(0);
    // The people who went another way (the phone registration's), by screen.
    expect(line('split')).toEqual([
      `  → 24 · ${screen.split.find((w) => w.to === 'askingRegistrationEmail')!.title.replace(/^24 · /, '')}: ${screen.elsewhere}`,
    ]);
    expect(line('stopped')[0]).toMatch(
      new RegExp(`^in corso ${screen.inProgress} · si fermano ${screen.stopped} \\(.+\\)$`),
    );
    expect(line('time')).toEqual([
      `tempo: mediana ≤ ${SCREEN_SECONDS_BUCKETS[2]} s, p90 ≤ ${SCREEN_SECONDS_BUCKETS[2]} s`,
    ]);
    expect(line('refusal')).toEqual([
      `codice sbagliato: 3 persone (${percent(3 / screen.arrived)}), 30 volte`,
      `codice scaduto: 2 persone (${percent(2 / screen.arrived)}), 2 volte`,
    ]);
    // The end: who arrived completed; no one stops there.
    const last = drawn.slice(
      drawn.indexOf('data-state="loggedIn"'),
      drawn.indexOf('</g>', drawn.indexOf('data-state="loggedIn"')),
    );
    const end = figuresOf('phone-login').screens.find((s) => s.state === 'loggedIn')!;
    expect(last).toContain(`>arrivati ${end.arrived}<`);
    expect(last).toMatch(new RegExp(`data-figure="completed"[^>]*>completano ${end.arrived} \\(`));
    expect(last).not.toContain('data-figure="stopped"');
  });

  it('grows the picture to hold the figures, and draws nothing else', () => {
    const diagram = diagrams.find((d) => d.id === 'phone-registration')!;
    const svg = svgOf('phone-registration');
    const drawn = drawFigures(svg, diagram, figuresOf('phone-registration'));
    const before = diagramLayout(svg, diagram.id).viewBox;
    const after = diagramLayout(drawn, diagram.id).viewBox;
    expect(after.x).toBe(before.x);
    expect(after.width).toBeGreaterThan(before.width + 150);
    expect(after.height).toBeGreaterThanOrEqual(before.height);
    expect(drawn).toContain(`max-width: ${after.width}px;`);
    // What Mermaid drew is untouched: the overlay is one group added at the end.
    const overlay = drawn.indexOf('<g class="funnel-figures"');
    expect(
      drawn
        .slice(0, overlay)
        .replace(/viewBox="[^"]*"/, '')
        .replace(/max-width: [\d.]+px;/, ''),
    ).toBe(
      svg
        .replace(/<\/svg>\s*$/, '')
        .replace(/viewBox="[^"]*"/, '')
        .replace(/max-width: [\d.]+px;/, ''),
    );
    expect(drawn.slice(overlay)).not.toMatch(/<script|\son[a-z]+=|href=/i);
  });

  it('keeps its texts at 4.5:1 at least on what is behind them', () => {
    const lum = (hex: string) =>
      [1, 3, 5]
        .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
        .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
        .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i]!, 0);
    const ratio = (a: string, b: string) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
    const c = FIGURE_COLOURS;
    expect(ratio(c.pillText, c.pill)).toBeGreaterThanOrEqual(4.5);
    expect(ratio(c.boxText, c.box)).toBeGreaterThanOrEqual(4.5);
    expect(ratio(c.muted, c.box)).toBeGreaterThanOrEqual(4.5);
  });
});
