import { inlineStylePageCsp } from './page-csp';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { apiError } from '../core/errors';
import { proofRequired } from '../domain/guard';
import type { JourneyRecorder } from '../flows/journey-recorder';
import type { RecordedJourney } from '../flows/journey-recording';
import type { Outbox, OutboxMessage } from '../sandbox/outbox';

/*
 * The /_sandbox routes of the service (docs/flows-http.md, docs/getting-started.md): what the sandbox's fake
 * SMS gateway and SMTP server received, as JSON (all of it, or one recipient's with the newest
 * code at `data.code`) and as a page for people (the newest code per recipient); and the
 * recorded login journeys (src/flows/journey-recorder.ts). Each route exists only when its
 * source does: the outbox in the sandbox, the journeys in the sandbox or with `debug` on,
 * and then only to the internal key outside the sandbox.
 */

export interface SandboxRoutes {
  outbox?: Outbox;
  journeys?: JourneyRecorder;
  /** Who may read the journeys (every email, phone and uid that logged in): the diagnostics' rule. */
  mayReadJourneys: (ctx: Context) => boolean;
  /** Forgets codes, cooldowns, limits, the SMS ledger and the outbox; absent where they live in Redis. */
  reset?: () => void;
}

const RESET_PATH = '/_sandbox/reset';

export const OUTBOX_PAGE_PATH = '/_sandbox/outbox.html';
/** Seconds between reloads of the outbox page (a meta refresh: no script). */
const REFRESH_SECONDS = 5;

const success = (data: unknown) => ({ success: true, error: null, data });

/** The one query parameter `name`, or undefined (absent, empty or repeated). */
function queryParam(ctx: Context, name: string): string | undefined {
  const values = new URLSearchParams(ctx.querystring).getAll(name);
  return values.length === 1 && values[0]!.trim() !== '' ? values[0] : undefined;
}

export function mountSandboxRoutes(router: Router, { outbox, journeys, mayReadJourneys, reset }: SandboxRoutes): void {
  if (outbox && reset) {
    // A developer walks docs/getting-started.md, the demo and /flows's examples again from a clean sandbox, without waiting out a cooldown or a limit.
    router.post(RESET_PATH, (ctx) => {
      reset();
      // The outbox page's button is a plain form (no script): back to the page it came from.
      if (ctx.is('application/x-www-form-urlencoded')) {
        ctx.status = 303;
        ctx.redirect(OUTBOX_PAGE_PATH);
        return;
      }
      ctx.body = success({ cleared: ['codes', 'cooldowns', 'limits', 'sms_ledger', 'outbox'] });
    });
  }
  if (outbox) {
    router.get('/_sandbox/outbox', (ctx) => {
      const to = queryParam(ctx, 'to');
      if (to === undefined) {
        ctx.body = success({ messages: outbox.list() });
        return;
      }
      const messages = outbox.to(to);
      ctx.body = success({ to: to.trim(), code: messages.find((m) => m.code)?.code ?? null, messages });
    });
    router.get(OUTBOX_PAGE_PATH, (ctx) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = outboxPage(outbox.newestCodes(), new Date(), reset !== undefined);
      ctx.set('Content-Security-Policy', OUTBOX_PAGE_CSP);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.set('Cache-Control', 'no-store');
    });
  }
  if (journeys) {
    router.use(['/_sandbox/journeys', '/_sandbox/journeys/:id'], (ctx, next) => {
      if (!mayReadJourneys(ctx)) throw proofRequired();
      return next();
    });
    router.get('/_sandbox/journeys', (ctx) => {
      const about = queryParam(ctx, 'about');
      const listed = journeys.list();
      ctx.body = success({ journeys: about === undefined ? listed : listed.filter(isAbout(about)) });
    });
    router.get('/_sandbox/journeys/:id', (ctx) => {
      const journey = journeys.get(ctx.params.id ?? '');
      if (!journey) throw apiError('unknown_action', { data: { journey: (ctx.params.id ?? '').slice(0, 64) } });
      ctx.body = success(journey);
    });
  }
}

/** Journeys that named this phone (any spelling), email (any case) or uid. */
function isAbout(about: string): (journey: RecordedJourney) => boolean {
  const wanted = about.trim();
  const digits = wanted.replace(/\D/g, '');
  const phoneLike = !wanted.includes('@') && digits.length >= 6 && /^[\s+\d().-]+$/.test(wanted);
  return (journey) =>
    journey.about.some((subject) => {
      const [kind, ...rest] = subject.split(':');
      const value = rest.join(':');
      if (kind === 'phone') return phoneLike && value.replace(/\D/g, '') === digits;
      if (kind === 'email') return value === wanted.toLowerCase();
      return value === wanted;
    });
}

// ---- the outbox page -------------------------------------------------------------------------

const STYLE = [
  'body{font:16px/1.4 system-ui,sans-serif;margin:2rem;color:#222}',
  'h1{font-size:1.3rem}',
  'table{border-collapse:collapse}',
  'th,td{text-align:left;padding:.4rem .9rem;border-bottom:1px solid #ddd;vertical-align:top}',
  '.code{font:700 1.6rem/1 ui-monospace,monospace;letter-spacing:.12em}',
  '.muted{color:#666;font-size:.9rem}',
  '.at{white-space:nowrap}',
].join('');

/** Nothing but this one inline style and the reset button's form to this service: no script, no image, no frame. */
export const OUTBOX_PAGE_CSP = inlineStylePageCsp(STYLE).replace("form-action 'none'", "form-action 'self'");

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for HTML element content and quoted attributes. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function ago(at: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(at)) / 1000));
  return seconds < 60
    ? `${seconds} s fa`
    : seconds < 3600
      ? `${Math.floor(seconds / 60)} min fa`
      : `${Math.floor(seconds / 3600)} h fa`;
}

/** The newest code per recipient, newest first, every value escaped; in Italian, as the demo and /flows it sits beside. */
function outboxPage(newest: OutboxMessage[], now: Date, resettable = false): string {
  const rows = newest.map(
    (m) =>
      `<tr><td>${escapeHtml(m.to)}</td><td>${escapeHtml(m.channel)}</td><td class="code">${escapeHtml(m.code ?? '')}</td>` +
      `<td>${escapeHtml(ago(m.at, now))}<br><span class="muted at">${escapeHtml(m.at)}</span></td><td class="muted">${escapeHtml(m.subject ?? '')}</td></tr>`,
  );
  const table = rows.length
    ? `<table><thead><tr><th>Destinatario</th><th>Canale</th><th>Ultimo codice</th><th>Inviato</th><th>Oggetto</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
    : '<p>Nessun codice inviato finora.</p>';
  return [
    '<!doctype html>',
    '<html lang="it"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<meta http-equiv="refresh" content="${REFRESH_SECONDS}">`,
    '<title>Outbox del sandbox: gli ultimi codici</title>',
    `<style>${STYLE}</style></head><body>`,
    '<h1>Outbox del sandbox: l’ultimo codice per destinatario</h1>',
    `<p class="muted">Si aggiorna ogni ${REFRESH_SECONDS} secondi. In JSON: <code>/_sandbox/outbox?to=&lt;telefono o email&gt;</code> (i messaggi di quel destinatario, dal più recente, l’ultimo codice in <code>data.code</code>).</p>`,
    table,
    ...(resettable
      ? [
          `<form method="post" action="${RESET_PATH}"><p><button type="submit">Ricomincia da capo</button> <span class="muted">cancella codici, attese tra un invio e l’altro, limiti, registro SMS e questa outbox</span></p></form>`,
        ]
      : []),
    '</body></html>',
  ].join('\n');
}
