import type { FunnelStats, JourneyFigures, ScreenFigures } from '../../domain/funnel/figures';
import { percent, refusalText, repeatsText, seconds, when } from './funnel-format';

/*
 * GET /flows/funnel: what people do on each journey of /flows, for a time range (docs/funnel.md).
 * Server-rendered, no script and no inline style (the CSP of /demo): the range is a link, the
 * bars are <meter> elements, every figure also in a table a screen reader reads row by row.
 * The words are product's (machines/diagrams/labels.ts through the figures), the page Italian.
 */

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export const RANGES = [
  { since: '1h', label: 'Ultima ora' },
  { since: '24h', label: 'Ultimo giorno' },
  { since: '7d', label: 'Ultimi 7 giorni' },
] as const;

/** Where the people who arrived went next, where more than one way was taken (a shared screen). */
function splitText(screen: ScreenFigures): string {
  const ways = screen.split.filter((w) => w.people > 0);
  if (ways.length < 2) return '';
  return ways.map((w) => (w.to === null ? `${w.title}: ${w.people}` : `→ ${w.title}: ${w.people}`)).join(', ');
}

function refusalsText(screen: ScreenFigures): string {
  return screen.refusals.map((r) => escapeHtml(refusalText(r, screen.arrived))).join('<br>') || '–';
}

function screenRow(screen: ScreenFigures, first: boolean, journey: JourneyFigures): string {
  const going = screen.arrived > screen.completed;
  const conversion = !going
    ? '<td class="num" data-figure="continued">–</td>'
    : `<td class="num" data-figure="continued">${screen.continued} <span class="pct">${percent(screen.conversion)}</span>${screen.conversion === null ? '' : ` <meter min="0" max="1" value="${screen.conversion.toFixed(3)}" aria-hidden="true"></meter>`}</td>`;
  const split = splitText(screen);
  return `<tr data-state="${screen.state}">
<th scope="row">${escapeHtml(screen.title)}${split ? `<br><span class="split" data-figure="split">${escapeHtml(split)}</span>` : ''}</th>
<td class="num" data-figure="arrived">${screen.arrived}${first ? ' <span class="pct">tutti i percorsi</span>' : ''}${first && screen.turnedAway > 0 ? ` <span class="pct" data-figure="turned-away">respinti all'ingresso ${screen.turnedAway}</span>` : ''}</td>
${conversion}
<td class="num" data-figure="elsewhere">${going ? screen.elsewhere : '–'}</td>
<td class="num" data-figure="in-progress">${going ? screen.inProgress : '–'}</td>
<td class="num" data-figure="stopped">${going ? `${screen.stopped} <span class="pct">${percent(screen.dropOff)}</span>` : '–'}</td>
<td class="num" data-figure="completed">${screen.last ? `${screen.completed} <span class="pct">${percent(journey.completionRate)} dei partiti</span>` : '–'}</td>
<td class="num" data-figure="repeats">${screen.repeats > 0 ? escapeHtml(repeatsText(screen.repeats, screen.repeatedPeople)) : '0'}</td>
<td class="num" data-figure="median">${seconds(screen.median_seconds)}</td>
<td class="num" data-figure="p90">${seconds(screen.p90_seconds)}</td>
<td data-figure="refusals">${refusalsText(screen)}</td>
</tr>`;
}

/** A journey's figures as text: its outcome, the people on each arrow, and the table of its screens (also under each diagram of /flows). */
export function journeyFigureBlocks(journey: JourneyFigures): string {
  const path = journey.edges
    .map((e) => {
      const from = journey.screens.find((s) => s.state === e.from)?.title ?? e.from;
      const to = journey.screens.find((s) => s.state === e.to)?.title ?? e.to;
      const again =
        e.repeats > 0
          ? ` <span class="repeats">(e ${escapeHtml(repeatsText(e.repeats, e.repeatedPeople))})</span>`
          : '';
      return `<li data-edge="${e.from}>${e.to}"><span class="screen">${escapeHtml(from)}</span> <span class="arrow">→ «${escapeHtml(e.label)}» →</span> <span class="screen">${escapeHtml(to)}</span>: <strong class="people">${e.people}</strong> ${e.people === 1 ? 'persona' : 'persone'}${again}</li>`;
    })
    .join('\n');
  return `<p class="outcome" data-figure="outcome">Partiti <strong data-figure="started">${journey.started}</strong>, arrivati alla fine <strong data-figure="completed">${journey.completed}</strong> (${percent(journey.completionRate)}); respinti all'ingresso <strong data-figure="turned-away">${journey.turnedAway}</strong>${journey.turnedAwayReasons.length > 0 ? ` (${escapeHtml(journey.turnedAwayReasons.map((r) => refusalText(r, 0)).join('; '))})` : ''}, non contati tra i partiti; tempo per arrivare alla fine: mediana ${seconds(journey.median_complete_seconds)}, p90 ${seconds(journey.p90_complete_seconds)}.</p>
<h3>Persone su ogni freccia</h3>
<ol class="edges">
${path}
</ol>
<table class="funnel">
<caption>Passi di «${escapeHtml(journey.title)}»: chi arriva, chi prosegue su questo percorso, chi va altrove, chi è ancora in corso, chi si ferma, chi arriva alla fine, le richieste ripetute, quanto resta sulla schermata, gli errori più frequenti</caption>
<thead><tr><th scope="col">Schermata</th><th scope="col">Arrivati</th><th scope="col">Proseguono (conversione)</th><th scope="col">Altrove</th><th scope="col">In corso</th><th scope="col">Si fermano (abbandono)</th><th scope="col">Completano</th><th scope="col">Richieste ripetute</th><th scope="col">Tempo mediano</th><th scope="col">Tempo p90</th><th scope="col">Errori principali</th></tr></thead>
<tbody>
${journey.screens.map((s, i) => screenRow(s, i === 0, journey)).join('\n')}
</tbody>
</table>`;
}

function journeySection(journey: JourneyFigures): string {
  return `<section class="journey" id="${journey.id}" data-journey="${journey.id}" aria-labelledby="${journey.id}-title">
<h2 id="${journey.id}-title">${escapeHtml(journey.title)}</h2>
${journeyFigureBlocks(journey)}
</section>`;
}

function comparison(stats: FunnelStats): string {
  if (!stats.compared || !stats.shifts) return '';
  const rows = stats.shifts.filter((s) => s.before !== null || s.after !== null);
  const top = new Set(rows.filter((s) => s.delta !== null && s.delta !== 0).slice(0, 3));
  const body = rows
    .map((s) => {
      const title = stats.journeys.find((j) => j.id === s.journey)?.title ?? s.journey;
      const delta =
        s.delta === null
          ? '–'
          : `${s.delta > 0 ? '+' : ''}${(Math.round(s.delta * 1000) / 10).toLocaleString('it-IT')} punti`;
      const mark = top.has(s) ? ' class="moved"' : '';
      return `<tr${mark} data-journey="${s.journey}" data-state="${s.state}"><th scope="row">${escapeHtml(title)}: ${escapeHtml(s.title)}${top.has(s) ? ' <strong>(in evidenza)</strong>' : ''}</th><td class="num">${percent(s.before)}</td><td class="num">${percent(s.after)}</td><td class="num">${delta}</td></tr>`;
    })
    .join('\n');
  return `<section class="compare" aria-labelledby="compare-title">
<h2 id="compare-title">Confronto: ${when(stats.compared.from)} – ${when(stats.compared.to)} e ${when(stats.from)} – ${when(stats.to)}</h2>
<p>Conversione di ogni schermata nei due periodi; in evidenza le tre che si sono mosse di più.</p>
<table class="shifts">
<caption>Conversione prima e dopo</caption>
<thead><tr><th scope="col">Percorso e schermata</th><th scope="col">Prima</th><th scope="col">Dopo</th><th scope="col">Differenza</th></tr></thead>
<tbody>
${body}
</tbody>
</table>
</section>`;
}

/** The page's HTML for the figures of a range; `current` is its preset (`24h`), undefined for explicit dates. */
export function funnelPage(stats: FunnelStats, current: string | undefined): string {
  const ranges = RANGES.map((r) =>
    r.since === current
      ? `<li><a href="?since=${r.since}" aria-current="page">${r.label}</a></li>`
      : `<li><a href="?since=${r.since}">${r.label}</a></li>`,
  ).join('\n');
  const compareLink = current
    ? `<a href="?since=${current}&amp;compare=previous">Confronta con il periodo precedente</a>`
    : '';
  return `<!doctype html>
<html lang="it">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Percorsi di accesso · imbuto</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/flows/funnel.css">
</head>
<body>
<header class="top">
<h1>Percorsi di accesso: cosa fanno le persone <span class="subtitle">contato dalla macchina dei flussi, su tutte le istanze</span></h1>
<p>Periodo: <span id="range">${when(stats.from)} – ${when(stats.to)}</span> (dall'inizio compreso alla fine esclusa, a blocchi di ${stats.resolution === 'minute' ? 'un minuto' : "un'ora"}): ogni percorso è contato nel periodo in cui è iniziato, per intero. Le schermate e le frecce sono quelle dei <a href="/flows">diagrammi dei percorsi</a>; i numeri contano le persone (un percorso ciascuna, con un identificativo anonimo), non le richieste.</p>
<nav aria-label="Periodo"><ul class="ranges">
${ranges}
</ul>${compareLink ? `<p>${compareLink}</p>` : ''}</nav>
<p class="note">Arrivati: le persone arrivate alla schermata per questo percorso, una volta sola (chi chiede un nuovo codice o sbaglia il codice resta una persona: sono richieste ripetute ed errori). Proseguono: verso la schermata seguente di questo percorso; altrove: verso un altro percorso (una schermata condivisa dice come si dividono). In corso: ultime viste lì, e possono ancora proseguire; si fermano: ferme lì da più di quanto la schermata concede (sulle schermate del codice, la durata del codice; altrove, il tempo di inattività configurato). Arrivati = proseguono + altrove + in corso + si fermano; sulla schermata finale arrivare è completare, una volta sola: tornarci (dopo aver aggiunto un telefono) non è un nuovo arrivo. Respinti all'ingresso: persone rifiutate sulla prima schermata prima di iniziare (invio non riuscito, attese, limiti, verifica anti-bot), non contate tra i partiti. Il tempo è quello tra la risposta che mostra la schermata e la richiesta seguente, dove la schermata consegna una prova; sulle schermate del codice, dall'invio del codice accettato. Mediana e p90 sono il limite superiore della fascia in cui cadono.</p>
<nav aria-label="Percorsi"><ul id="journey-index">
${stats.journeys.map((j) => `<li><a href="#${j.id}">${escapeHtml(j.title)}</a></li>`).join('\n')}
</ul></nav>
</header>
<main>
${comparison(stats)}
${stats.journeys.map(journeySection).join('\n')}
</main>
</body>
</html>
`;
}
