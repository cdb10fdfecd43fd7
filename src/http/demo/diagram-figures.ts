import type { JourneyDiagram } from '../../../machines';
import type { JourneyFigures, ScreenFigures } from '../../domain/funnel/figures';
import { percent, persons, refusalText, repeatsText, seconds } from './funnel-format';

/*
 * The funnel's figures drawn on a journey's diagram (GET /flows/<id>.svg with a range, for
 * funnel readers; docs/funnel.md). The diagrams are Mermaid's SVG, rendered once by `npm run
 * docs` in a browser; the service has no layout engine, so the figures are laid over the SVG as
 * it is, at the coordinates Mermaid wrote into it: each arrow's label (`data-id` L_<from>_<to>_<n>,
 * or L_<from>_note<k>_0 where the arrow passes a note, numbered as renderJourneyMermaid numbers
 * them) gets the number of people beside it, and each screen (`flowchart-<state>-<n>`) a box in
 * a column to the right of the drawing, joined to it by a dotted line, with its conversion,
 * drop-off, median and p90 time and top refusals. The viewBox grows to hold the column. An
 * arrow or screen the SVG does not have (a diagram not regenerated since the machine changed) is
 * left undrawn; its figures are still in the page's table.
 *
 * Colours hold 4.5:1 on what is behind them: white on the accent blue, ink on white.
 */

const NUMBER = String.raw`-?\d+(?:\.\d+)?`;
const FONT = 12;
const LINE = 16;
/** DejaVu Sans at 12 px: wide enough for the digits and Italian of the boxes. */
const CHAR = 7;
const GAP = 28;
export const FIGURE_COLOURS = {
  pill: '#1f5fa8',
  pillText: '#ffffff',
  box: '#ffffff',
  boxText: '#1b1f23',
  border: '#3178c6',
  muted: '#4f5762',
  leader: '#6b7480',
} as const;

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Box {
  x: number;
  y: number;
  halfWidth: number;
  halfHeight: number;
}

export interface DiagramLayout {
  viewBox: { x: number; y: number; width: number; height: number };
  /** Each screen node by its state key: centre and half extents. */
  nodes: Map<string, Box>;
  /** Each edge label by its Mermaid id: centre and half extents of its background. */
  labels: Map<string, Box>;
}

/** Half the width and height of a node's shape: a rect's, or the extent of the path a rounded one is drawn with. */
function extentOf(markup: string): { halfWidth: number; halfHeight: number } {
  const rect = new RegExp(
    `<rect class="basic label-container"[^>]*?\\sx="(${NUMBER})" y="(${NUMBER})" width="(${NUMBER})" height="(${NUMBER})"`,
  ).exec(markup);
  if (rect) return { halfWidth: Number(rect[3]) / 2, halfHeight: Number(rect[4]) / 2 };
  const path = /<path d="([^"]+)"/.exec(markup);
  const points = [...(path?.[1] ?? '').matchAll(new RegExp(`(${NUMBER})[ ,](${NUMBER})`, 'g'))].map(
    (m) => [Math.abs(Number(m[1])), Math.abs(Number(m[2]))] as const,
  );
  return { halfWidth: Math.max(0, ...points.map((p) => p[0])), halfHeight: Math.max(0, ...points.map((p) => p[1])) };
}

/** Where Mermaid placed the journey's screens and arrow labels. */
export function diagramLayout(svg: string, journeyId: string): DiagramLayout {
  const view = new RegExp(`<svg[^>]*?viewBox="(${NUMBER}) (${NUMBER}) (${NUMBER}) (${NUMBER})"`).exec(svg);
  if (!view) throw new Error(`diagram figures: the SVG of ${journeyId} has no viewBox`);
  const nodes = new Map<string, Box>();
  const nodeStart = new RegExp(
    `<g class="node [^"]*" id="journey-${journeyId}-flowchart-([A-Za-z0-9]+)-\\d+"[^>]*transform="translate\\((${NUMBER}), (${NUMBER})\\)">`,
    'g',
  );
  for (const match of svg.matchAll(nodeStart)) {
    const after = svg.slice(match.index + match[0].length, match.index + match[0].length + 20_000);
    nodes.set(match[1]!, {
      x: Number(match[2]),
      y: Number(match[3]),
      ...extentOf(after.slice(0, after.search(/<g class="node |$/))),
    });
  }
  const labels = new Map<string, Box>();
  const label = new RegExp(
    `<g class="edgeLabel" transform="translate\\((${NUMBER}), (${NUMBER})\\)">\\s*<g class="label" data-id="([^"]+)"[^>]*>\\s*(?:<g>\\s*)?<rect class="background"[^>]*?width="(${NUMBER})" height="(${NUMBER})"`,
    'g',
  );
  for (const match of svg.matchAll(label))
    labels.set(match[3]!, {
      x: Number(match[1]),
      y: Number(match[2]),
      halfWidth: Number(match[4]) / 2,
      halfHeight: Number(match[5]) / 2,
    });
  return {
    viewBox: { x: Number(view[1]), y: Number(view[2]), width: Number(view[3]), height: Number(view[4]) },
    nodes,
    labels,
  };
}

/** The Mermaid id of each action's label, numbered as renderJourneyMermaid draws them (machines/diagrams/journey-diagrams.ts). */
export function labelIds(diagram: JourneyDiagram): string[] {
  let notes = 0;
  const pairs = new Map<string, number>();
  return diagram.actions.map((action) => {
    if (action.notes.length > 0) return `L_${action.from}_note${++notes}_0`;
    const pair = `${action.from}_${action.to}`;
    const n = pairs.get(pair) ?? 0;
    pairs.set(pair, n + 1);
    return `L_${pair}_${n}`;
  });
}

/** The lines of a screen's box: each a figure name (for tests and tools) and its text. */
function screenLines(screen: ScreenFigures, first: boolean, journey: JourneyFigures): Array<[string, string]> {
  // The first screen is every journey's: its arrivals are everyone's; those who went on its way started this one.
  const lines: Array<[string, string]> = [
    ['arrived', first ? `arrivati ${screen.arrived} (tutti i percorsi)` : `arrivati ${screen.arrived}`],
  ];
  // Turned away at the door: refused before any journey began, so not among the arrived; this journey's own after them.
  if (first && screen.turnedAway > 0)
    lines.push([
      'turned-away',
      `respinti all'ingresso ${screen.turnedAway}, verso questo percorso ${journey.turnedAway}`,
    ]);
  if (first)
    for (const refusal of journey.turnedAwayReasons) lines.push(['turned-away-reason', `  ${refusalText(refusal, 0)}`]);
  // Arriving at the end is completing: going on, stopping and time there would mean nothing.
  if (screen.arrived > screen.completed || !screen.last) {
    lines.push(['continued', `proseguono ${screen.continued} (${percent(screen.conversion)})`]);
    lines.push(['elsewhere', `altrove ${screen.elsewhere}`]);
    for (const way of screen.split)
      if (!way.own && way.to !== null && way.people > 0) lines.push(['split', `  → ${way.title}: ${way.people}`]);
    lines.push([
      'stopped',
      `in corso ${screen.inProgress} · si fermano ${screen.stopped} (${percent(screen.dropOff)})`,
    ]);
    lines.push(['time', `tempo: mediana ${seconds(screen.median_seconds)}, p90 ${seconds(screen.p90_seconds)}`]);
  }
  if (screen.last) {
    lines.push(['completed', `completano ${screen.completed} (${percent(journey.completionRate)} dei partiti)`]);
    lines.push([
      'complete-time',
      `per completare: mediana ${seconds(journey.median_complete_seconds)}, p90 ${seconds(journey.p90_complete_seconds)}`,
    ]);
  }
  if (screen.repeats > 0) lines.push(['repeats', repeatsText(screen.repeats, screen.repeatedPeople)]);
  for (const refusal of screen.refusals) lines.push(['refusal', refusalText(refusal, screen.arrived)]);
  return lines;
}

const at = (n: number) => String(Math.round(n * 100) / 100);

/** The SVG with the journey's figures laid over it. */
export function drawFigures(svg: string, diagram: JourneyDiagram, figures: JourneyFigures): string {
  const layout = diagramLayout(svg, diagram.id);
  const c = FIGURE_COLOURS;
  const parts: string[] = [];

  const ids = labelIds(diagram);
  let pillsRight = -Infinity;
  diagram.actions.forEach((action, i) => {
    const label = layout.labels.get(ids[i]!);
    const edge = figures.edges[i];
    if (!label || !edge) return;
    const text = persons(edge.people);
    const width = text.length * CHAR + 14;
    const x = label.x + label.halfWidth + 6;
    const y = label.y - 11;
    pillsRight = Math.max(pillsRight, x + width);
    parts.push(
      `<g class="funnel-edge" data-edge="${escapeXml(`${action.from}>${action.to}`)}"><rect x="${at(x)}" y="${at(y)}" width="${width}" height="22" rx="11" fill="${c.pill}"/><text class="people" x="${at(x + width / 2)}" y="${at(y + 15.5)}" text-anchor="middle" font-size="${FONT}" font-weight="700" fill="${c.pillText}">${escapeXml(text)}</text></g>`,
    );
  });

  // The column of boxes, right of everything Mermaid drew and of the pills; a box never overlaps the one above it.
  const right = layout.viewBox.x + layout.viewBox.width;
  const column = Math.max(right, pillsRight) + GAP;
  let width = 0;
  let bottom = -Infinity;
  const boxes: string[] = [];
  const placed = figures.screens
    .map((screen, i) => ({ screen, first: i === 0, node: layout.nodes.get(screen.state) }))
    .filter((s): s is typeof s & { node: Box } => s.node !== undefined)
    .sort((a, b) => a.node.y - b.node.y);
  for (const { screen, first, node } of placed) {
    const lines = screenLines(screen, first, figures);
    const boxWidth = Math.max(...lines.map(([, text]) => text.length)) * CHAR + 16;
    const boxHeight = lines.length * LINE + 10;
    const top = Math.max(node.y - node.halfHeight, bottom + 8);
    bottom = top + boxHeight;
    width = Math.max(width, boxWidth);
    const texts = lines
      .map(
        ([figure, text], n) =>
          `<text data-figure="${figure}" x="${at(column + 8)}" y="${at(top + 5 + (n + 1) * LINE - 4)}" font-size="${FONT}" fill="${figure === 'refusal' ? c.muted : c.boxText}"${n === 0 ? ' font-weight="700"' : ''}>${escapeXml(text)}</text>`,
      )
      .join('');
    boxes.push(
      `<g class="funnel-screen" data-state="${escapeXml(screen.state)}"><path d="M${at(node.x + node.halfWidth)},${at(node.y)} H${at(column - 6)} V${at(top + 12)} H${at(column)}" fill="none" stroke="${c.leader}" stroke-width="1" stroke-dasharray="2 3"/><rect x="${at(column)}" y="${at(top)}" width="${boxWidth}" height="${boxHeight}" rx="4" fill="${c.box}" stroke="${c.border}"/>${texts}</g>`,
    );
  }
  const { x, y, height } = layout.viewBox;
  const newWidth = Math.max(right, column + width + 8) - x;
  const newHeight = Math.max(y + height, bottom + 8) - y;
  const overlay = `<g class="funnel-figures" font-family="DejaVu Sans, sans-serif">${[...boxes, ...parts].join('')}</g>`;
  return svg
    .replace(
      new RegExp(`(<svg[^>]*?viewBox=")${NUMBER} ${NUMBER} ${NUMBER} ${NUMBER}"`),
      `$1${at(x)} ${at(y)} ${at(newWidth)} ${at(newHeight)}"`,
    )
    .replace(/(<svg[^>]*?style="max-width: )[\d.]+px;/, `$1${at(newWidth)}px;`)
    .replace(/<\/svg>\s*$/, `${overlay}</svg>\n`);
}
