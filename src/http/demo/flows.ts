import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionsInto, type JourneyDiagram } from '../../../machines';
import { failureError } from '../../flows/answer';
import { shippedPath } from '../../core/paths';
import type { FunnelStats, JourneyFigures } from '../../domain/funnel/figures';
import { OUTBOX_PAGE_PATH as OUTBOX_PATH } from '../sandbox-routes';
import { journeyFigureBlocks, RANGES } from './funnel-page';
import { when } from './funnel-format';
import { journeyExamples, type JourneyExample } from './flow-examples';

/*
 * GET /flows: the login journeys for product and QA (docs/demo.md). One section per journey: its
 * diagram (the SVG `npm run docs` rendered into docs/journeys/, which the build carries, served beside the page), its
 * steps (number, screen, what the frontend shows, the action that leads there), its refusals
 * with the API's texts, and its requests with an example body and answer each. Everything but
 * the examples is read from the journey diagrams (machines/diagrams/journey-diagrams.ts); the examples
 * are one person walking the journey in the sandbox (docs/journeys/examples.json, recorded by
 * `npm run docs`, which checks they take the steps the diagram draws). Built once, as HTML
 * without any script or inline style (the page's CSP is /demo's).
 */

const JOURNEY_SVG_DIR = shippedPath('docs', 'journeys');
/** /flows's stylesheet, which the build carries too. */
export const FLOWS_CSS_PATH = shippedPath('src', 'http', 'demo', 'page', 'flows.css');
export const flowsSvgPath = (id: string) => `/flows/${id}.svg`;

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const html = (strings: TemplateStringsArray, ...values: Array<string | number>) =>
  strings.reduce((out, part, i) => out + part + (i < values.length ? String(values[i]) : ''), '');

function stepsTable(diagram: JourneyDiagram): string {
  const rows = diagram.screens.map((screen) => {
    const into = actionsInto(diagram, screen.state);
    const reached = into.length
      ? into.map((a) => html`«${escapeHtml(a.label)}» <code>${a.action}</code>`).join('<br>')
      : 'inizio del percorso';
    const shows = screen.screen
      ? html`<code>${screen.screen}</code>: ${escapeHtml(screen.shows)}`
      : escapeHtml(screen.shows);
    return html`<tr data-state="${screen.state}"><td class="num">${screen.step ?? '–'}</td><td>${escapeHtml(screen.name)}</td><td>${shows}</td><td>${reached}</td></tr>`;
  });
  return html`<table class="steps">
<caption>Passi di «${escapeHtml(diagram.title)}»</caption>
<thead><tr><th scope="col">Passo</th><th scope="col">Schermata</th><th scope="col">Cosa mostra il frontend</th><th scope="col">Azione che porta qui</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

function refusalsTable(diagram: JourneyDiagram): string {
  const title = (state: string) => diagram.screens.find((s) => s.state === state)?.title ?? state;
  const rows = diagram.refusals.map((r) => {
    const text = failureError({ reason: r.reason, ...(r.field ? { data: { field: r.field } } : {}) }).message;
    return html`<tr><td>${escapeHtml(title(r.at))}</td><td>${escapeHtml(r.mistake)}</td><td>${escapeHtml(text)}</td><td><code>${r.reason}</code></td></tr>`;
  });
  return html`<table class="refusals">
<caption>Errori di «${escapeHtml(diagram.title)}»: l'utente resta sulla schermata e legge il testo</caption>
<thead><tr><th scope="col">Schermata</th><th scope="col">Errore</th><th scope="col">Testo mostrato</th><th scope="col"><code>reason</code></th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

/** The journey's requests: the steps each passes (the diagram's), and one person's recorded request and answer (docs/journeys/examples.json). */
function exchanges(diagram: JourneyDiagram, example: JourneyExample | undefined): string {
  if (!example)
    return '<h3>Richieste e risposte di esempio</h3>\n<p class="note">Esempi non generati: <code>npm run docs</code>.</p>';
  const items = diagram.replayed.map((request, i) => {
    const action = diagram.actions.find((a) => a.requests.includes(i + 1));
    const recorded = example.requests[i];
    const to = diagram.screens.find((s) => s.state === request.states[request.states.length - 1]);
    return html`<li>
<h4>«${escapeHtml(action?.label ?? request.action)}» → ${escapeHtml(to?.title ?? '')}</h4>
<p class="passed">Passi attraversati: ${request.steps.join(' → ') || '–'}${action?.notes.length ? html`; il servizio: ${escapeHtml(action.notes.join(', '))}` : ''}.</p>
<div class="exchange">
<div><p class="label">Richiesta</p>
<pre class="request"><code>POST /${request.action}
${escapeHtml(JSON.stringify(recorded?.body ?? {}, null, 2))}</code></pre></div>
<div><p class="label">Risposta</p>
<pre class="answer"><code>${escapeHtml(JSON.stringify(recorded?.answer ?? {}, null, 2))}</code></pre></div>
</div>
</li>`;
  });
  const { person } = example;
  const who = html`<p class="person">Registrate nel sandbox da <strong>${escapeHtml(person.name)}</strong> (uid <code>${person.uid}</code>, <code>${escapeHtml(person.email)}</code>${person.phones.map((p) => html`, <code>${p}</code>`).join('')}): ogni identificativo è suo.</p>`;
  // Closed at first: the page is read for its diagrams; the JSON is one click away, and half the page's height.
  return html`<details class="examples">
<summary><h3>Richieste e risposte di esempio <span class="count">(${items.length}, di ${escapeHtml(person.name)})</span></h3></summary>
${who}
<ol class="exchanges">
${items.join('\n')}
</ol>
</details>`;
}

/** The diagram's address: with a range, the SVG with that range's figures drawn on it (same access rule as the page). */
const svgSource = (id: string, stats: FunnelStats | undefined) =>
  stats ? `${flowsSvgPath(id)}?from=${Date.parse(stats.from)}&amp;to=${Date.parse(stats.to)}` : flowsSvgPath(id);

function section(diagram: JourneyDiagram, example: JourneyExample | undefined, stats?: FunnelStats): string {
  const figures: JourneyFigures | undefined = stats?.journeys.find((j) => j.id === diagram.id);
  const alt = `Diagramma di «${diagram.title}»: ${diagram.screens.map((s) => s.title).join(' → ')}${figures ? '; con le persone su ogni freccia e le cifre di ogni schermata, elencate anche sotto' : ''}`;
  const counted = figures
    ? html`
<div class="funnel-figures" data-figures="${diagram.id}">
${journeyFigureBlocks(figures)}
</div>`
    : '';
  return html`<section class="journey" id="${diagram.id}" data-journey="${diagram.id}" aria-labelledby="${diagram.id}-title">
<h2 id="${diagram.id}-title">${escapeHtml(diagram.title)}</h2>
<p class="spec">Nel contratto (la sequenza citata com’è): <q lang="en">${escapeHtml(diagram.spec)}</q>.</p>
<figure class="diagram">
<img src="${svgSource(diagram.id, figures ? stats : undefined)}" alt="${escapeHtml(alt)}">
<figcaption>${diagram.screens.length} schermate, ${diagram.actions.length} azioni. Nei riquadri gialli le chiamate del servizio; gli errori sono nella tabella sotto.${figures ? ' Sulle frecce le persone del periodo; a destra, per ogni schermata, chi prosegue (conversione), chi va altrove e dove, chi è in corso, chi si ferma (abbandono), chi completa, tempi ed errori principali.' : ''}</figcaption>
</figure>${counted}
<h3>Passi</h3>
${stepsTable(diagram)}
<h3>Errori</h3>
${refusalsTable(diagram)}
${exchanges(diagram, example)}
</section>`;
}

/** What a funnel reader sees on /flows: the range control, and once a range is chosen its figures. */
export interface FlowsFunnel {
  /** The figures of the chosen range; undefined until one is chosen. */
  stats?: FunnelStats;
  /** The preset chosen (`24h`); undefined for explicit dates or none. */
  current?: string;
}

function rangeControl(funnel: FlowsFunnel): string {
  const { stats, current } = funnel;
  const links = RANGES.map(
    (r) =>
      html`<li><a href="/flows?since=${r.since}"${r.since === current ? ' aria-current="page"' : ''}>${r.label}</a></li>`,
  ).join('\n');
  const since = current ?? '24h';
  const period = stats
    ? html`Periodo: <span id="range">${when(stats.from)} – ${when(stats.to)}</span> (dall'inizio compreso alla fine esclusa, a blocchi di ${stats.resolution === 'minute' ? 'un minuto' : "un'ora"}). Sulle frecce dei diagrammi le persone che le hanno percorse; accanto a ogni schermata chi arriva, chi prosegue, chi va altrove, chi è in corso, chi si ferma, chi completa, i tempi e gli errori principali. Si contano le persone, una volta ciascuna (un percorso con un identificativo anonimo), nel periodo in cui hanno iniziato; richieste ripetute ed errori a parte.`
    : 'Scegli un periodo per vedere sui diagrammi quante persone percorrono ogni freccia e, per ogni schermata, conversione, abbandono, completamento, tempi ed errori principali.';
  return html`<section class="funnel-range" aria-labelledby="funnel-title">
<h2 id="funnel-title">Cosa fanno le persone</h2>
<p>${period}</p>
<nav aria-label="Periodo"><ul class="ranges">
${links}
</ul></nav>
<p class="compare-links"><a href="/flows/funnel?since=${since}&amp;compare=previous">Confronta con il periodo precedente</a> · <a href="/flows/funnel?since=${since}">Le stesse cifre in tabella</a></p>
</section>
`;
}

/**
 * What else the service serves that the page may link to: /flows answers a funnel reader where the
 * demo is off (production), and there a link to /demo or to the sandbox's outbox would lead nowhere.
 */
export interface FlowsLinks {
  demo: boolean;
  /** The sandbox's outbox page; undefined without the sandbox. */
  outbox?: string;
}

/** The page's HTML; with `funnel` (a funnel reader, docs/funnel.md), the range control and the chosen range's figures. */
export function flowsPage(
  diagrams: readonly JourneyDiagram[],
  links: FlowsLinks,
  funnel?: FlowsFunnel,
  examples: ReadonlyMap<string, JourneyExample> = committedExamples(),
): string {
  const nav = diagrams.map(
    (d) =>
      html`<li><a href="#${d.id}">${escapeHtml(d.title)}</a> <span class="count">(${d.screens.length} schermate)</span></li>`,
  );
  return html`<!doctype html>
<html lang="it">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Percorsi di accesso · diagrammi</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/flows/flows.css">
</head>
<body>
<header class="top">
<h1>Percorsi di accesso <span class="subtitle">diagrammi per prodotto e QA, generati dalla macchina dei flussi</span></h1>
<p>Ogni percorso: il diagramma (schermate con il numero di passo, l'azione dell'utente su ogni freccia, le chiamate del servizio nei riquadri gialli), la tabella dei passi, gli errori con il testo che l'API risponde, e le richieste con una risposta di esempio.${links.demo ? ' Provali su <a href="/demo">/demo</a>.' : ''} Cosa fanno le persone su ogni percorso (per gli operatori): <a href="/flows/funnel">/flows/funnel</a>.</p>
<p class="note">Gli esempi sono registrati nel sandbox: una persona per percorso (Mario, che ha il telefono +393331234567; Giulia, senza telefono; Elena e Francesca, che non hanno mai confermato l’email: il telefono di Elena è suo, quello sull’account di Francesca no; e chi si registra), e ogni telefono, email, uid, prova e token di un percorso è suo. Si ripetono così come sono contro <code>npm start</code>, dopo <code>POST /_sandbox/reset</code>, con il codice che il sandbox ha inviato, ${links.outbox ? html`in <a href="${links.outbox}">${links.outbox}</a>` : html`nella sua posta in uscita (<code>${OUTBOX_PATH}</code>, solo con il sandbox)`}, e la prova della risposta indicata. Le prove e i token firmati cambiano a ogni richiesta: sono mostrati come ‹…› con ciò che legano.</p>
${funnel ? rangeControl(funnel) : ''}<nav aria-label="Percorsi"><ul id="journey-index">
${nav.join('\n')}
</ul></nav>
</header>
<main>
${diagrams.map((d) => section(d, examples.get(d.id), funnel?.stats)).join('\n')}
</main>
</body>
</html>
`;
}

/** CSS pixels per unit of a diagram's viewBox: one scale for every journey, so their text is one size (15 px, Mermaid's). */
const DIAGRAM_SCALE = 1;

/**
 * The diagram at DIAGRAM_SCALE: Mermaid sizes its SVG `width="100%"`, which as an image fills the
 * column, so a short journey's text came out twice as large as a tall one's (capped in height).
 * Sized from its viewBox instead (the one with the funnel's figures drawn, when it has them), a
 * journey is as wide and tall as it needs: the page scrolls past a tall one.
 */
export function atDiagramScale(svg: string): string {
  const root = /<svg\b[^>]*>/.exec(svg);
  const view = root && /\bviewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"/.exec(root[0]);
  if (!root || !view) return svg;
  const size = (units: string) => String(Math.ceil(Number(units) * DIAGRAM_SCALE));
  const sized = root[0]
    .replace(/\s(?:width|height)="[^"]*"/g, '')
    .replace(/\sstyle="max-width:[^"]*"/, '')
    .replace(/^<svg\b/, `<svg width="${size(view[1]!)}" height="${size(view[2]!)}"`);
  return svg.slice(0, root.index) + sized + svg.slice(root.index + root[0].length);
}

let examplesRead: ReadonlyMap<string, JourneyExample> | undefined;
/** docs/journeys/examples.json, read once. */
const committedExamples = () => (examplesRead ??= journeyExamples());

/** The rendered SVG of a journey, as committed by `npm run docs`; undefined when it was never generated. */
export function journeySvg(id: string): string | undefined {
  const path = join(JOURNEY_SVG_DIR, `${id}.svg`);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}
