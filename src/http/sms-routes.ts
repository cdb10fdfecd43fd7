import type { PhoneNumberType } from 'libphonenumber-js';
import { inlineStylePageCsp } from './page-csp';
import type { Context, Next } from 'koa';
import { apiError, methodNotAllowed } from '../core/errors';
import type { Deps } from '../domain/deps';
import { diagnosticsCaller } from '../domain/guard';
import { keysOf } from './keys';
import { RECEIPT_PATH } from '../domain/sms/router';
import type { LedgerEntry } from '../domain/sms/store';
import type { LedgerGroup } from '../domain/sms/ledger';
import { escapeHtml } from './sandbox-routes';
import { GROUP_COLUMNS, SMS_TEXTS } from './sms-texts';
import { readablePercent, readableTime, textLocale, type TextLocale } from '../core/text-locale';

/*
 * The SMS endpoints beside the actions (docs/sms.md):
 *   POST /_sms/receipts/<provider>   a provider's delivery receipt, authenticated as that
 *                                    provider signs its callbacks (Twilio: X-Twilio-Signature);
 *                                    403 otherwise. Form-encoded, as Twilio posts them; JSON
 *                                    for Meta's WhatsApp webhook (X-Hub-Signature-256 over the raw body)
 *   GET  /_sms/receipts/<provider>   Meta's webhook handshake (hub.verify_token; hub.challenge echoed)
 *   GET  /_sms/ledger?since=<s>      the ledger: conversion by country and provider, blocked
 *                                    ranges, breakers, the newest entries (JSON; npm run ledger)
 *   GET  /sms                        the same as a page, beside /flows
 *   POST /_sms/blocks/lift           {"range": "<digits>"}: an operator lifts a pumping block
 * The ledger, the page and the lift are an operator's: `x-internal-key`, or the sandbox, as
 * every diagnostic (src/domain/guard.ts). A receipt needs no key: its signature is its key.
 */

const SMS_PAGE_PATH = '/sms';
const LEDGER_PATH = '/_sms/ledger';
const LIFT_PATH = '/_sms/blocks/lift';
/** Providers post a handful of fields; anything larger is not a receipt. */
const RECEIPT_LIMIT = 16 * 1024;
/** Meta batches statuses in one post: larger, still bounded. */
const JSON_RECEIPT_LIMIT = 256 * 1024;
const DEFAULT_SINCE_SECONDS = 24 * 3600;
const NEWEST = 50;

async function readText(ctx: Context, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw apiError('payload_too_large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function operator(ctx: Context, deps: Deps): void {
  if (!diagnosticsCaller({ deps, keys: keysOf(ctx) })) throw apiError('unauthorized');
}

/** What the ledger endpoint, the page and `npm run ledger` show. */
export async function ledgerReport(deps: Deps, sinceSeconds: number) {
  const { sms, now } = deps;
  const at = now();
  const entries = await sms.ledger.since(at - sinceSeconds * 1000);
  // The newest messages that went out; those no provider took are counted in totals and not_sent.
  const newest = entries
    .filter((entry) => entry.not_sent === undefined)
    .slice(-NEWEST)
    .reverse();
  return {
    since: new Date(at - sinceSeconds * 1000).toISOString(),
    totals: sms.ledger.summary(entries),
    by_channel: sms.ledger.summary(entries, 'channel'),
    not_sent: sms.ledger.notSent(entries),
    blocks: (await sms.pumping.blocks()).map((b) => ({ range: b.range, until: new Date(b.until).toISOString() })),
    challenges: await sms.ledger.challenges(at - sinceSeconds * 1000),
    // A passkey login is a code not sent: the SMS it saved.
    logins: await sms.ledger.logins(at - sinceSeconds * 1000).then((l) => ({ ...l, sms_saved: l.passkey })),
    breakers: sms.router.breakerStates(),
    entries: newest.map((entry) => ({ ...shown(entry), state: sms.ledger.stateOf(entry) })),
  };
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const shown = (entry: LedgerEntry) => ({
  ...entry,
  accepted_at: iso(entry.accepted_at),
  delivered_at: iso(entry.delivered_at),
  read_at: iso(entry.read_at),
  failed_at: iso(entry.failed_at),
  verified_at: iso(entry.verified_at),
  fallback_at: iso(entry.fallback_at),
});

function sinceOf(ctx: Context): number {
  const given = Number(new URLSearchParams(ctx.querystring).get('since'));
  return Number.isInteger(given) && given > 0 ? Math.min(given, 366 * 24 * 3600) : DEFAULT_SINCE_SECONDS;
}

/** The SMS resources and the methods each takes (its 405's Allow header): also what the OpenAPI document is held to. */
export const SMS_ROUTES: ReadonlyArray<{ path: string; methods: readonly string[] }> = [
  { path: `${RECEIPT_PATH}:provider`, methods: ['GET', 'POST'] },
  { path: LIFT_PATH, methods: ['POST'] },
  { path: LEDGER_PATH, methods: ['GET', 'HEAD'] },
  { path: SMS_PAGE_PATH, methods: ['GET', 'HEAD'] },
];

/** The methods the SMS resource at `path` takes; undefined for a path that is none. */
function allowedMethods(path: string): readonly string[] | undefined {
  const route = path.startsWith(RECEIPT_PATH) ? SMS_ROUTES[0] : SMS_ROUTES.find((r) => r.path === path);
  return route?.methods;
}

export function createSmsRoutes(deps: Deps) {
  return async function smsRoutes(ctx: Context, next: Next): Promise<void> {
    const { path } = ctx;
    if (!path.startsWith('/_sms/') && path !== SMS_PAGE_PATH) return next();
    ctx.state.action = path.startsWith(RECEIPT_PATH) ? RECEIPT_PATH : path;

    if (path.startsWith(RECEIPT_PATH) && ctx.method === 'GET') {
      // A webhook's subscription handshake (Meta): the challenge echoed as text when the verify token holds.
      const answer = deps.sms.handshake(path.slice(RECEIPT_PATH.length), new URLSearchParams(ctx.querystring));
      if (answer === 'unknown_provider') throw apiError('unknown_action');
      if (answer === 'refused') {
        ctx.state.reason = 'unauthorized';
        ctx.status = 403;
        ctx.body = { success: false, error: 'verify token refused', data: { reason: 'unauthorized' } };
        return;
      }
      ctx.type = 'text/plain';
      ctx.body = answer;
      return;
    }
    if (path.startsWith(RECEIPT_PATH) && ctx.method === 'POST') {
      const provider = path.slice(RECEIPT_PATH.length);
      // Meta posts JSON signed over its raw bytes; Twilio posts forms signed over the URL and fields.
      const json = deps.sms.router.provider(provider)?.webhook !== undefined;
      if (json ? !ctx.is('application/json') : !ctx.is('application/x-www-form-urlencoded'))
        throw apiError(json ? 'unsupported_media_type' : 'form_expected');
      const rawBody = await readText(ctx, json ? JSON_RECEIPT_LIMIT : RECEIPT_LIMIT);
      const base = deps.config.sms.receipts.callback_base_url.replace(/\/+$/, '') || ctx.origin;
      const outcome = await deps.sms.receipt(provider, new URLSearchParams(ctx.querystring).get('m') ?? undefined, {
        url: `${base}${ctx.originalUrl}`,
        header: (name) => ctx.get(name) || undefined,
        form: json ? {} : Object.fromEntries(new URLSearchParams(rawBody)),
        rawBody,
      });
      if (outcome === 'unknown_provider') throw apiError('unknown_action');
      if (outcome === 'refused') {
        ctx.state.reason = 'unauthorized';
        ctx.status = 403;
        ctx.body = { success: false, error: 'signature refused', data: { reason: 'unauthorized' } };
        return;
      }
      ctx.status = 204;
      return;
    }
    if (path === LIFT_PATH && ctx.method === 'POST') {
      operator(ctx, deps);
      if (!ctx.is('application/json')) throw apiError('unsupported_media_type');
      let range: unknown;
      try {
        range = (JSON.parse(await readText(ctx, 1024)) as { range?: unknown }).range;
      } catch {
        throw apiError('malformed_json');
      }
      if (typeof range !== 'string' || !/^\d{3,12}$/.test(range))
        throw apiError('invalid_request', {
          data: { issues: [{ path: 'range', message: 'digits of a blocked range' }] },
        });
      ctx.body = { success: true, error: null, data: { range, lifted: await deps.sms.pumping.lift(range) } };
      return;
    }
    const allow = allowedMethods(path);
    if (allow === undefined) throw apiError('unknown_action');
    if (!allow.includes(ctx.method)) throw methodNotAllowed(allow);
    if (path === LEDGER_PATH) {
      operator(ctx, deps);
      ctx.body = { success: true, error: null, data: await ledgerReport(deps, sinceOf(ctx)) };
      return;
    }
    if (path === SMS_PAGE_PATH) {
      operator(ctx, deps);
      const since = sinceOf(ctx);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = smsPage(await ledgerReport(deps, since), since, deps.config.mail.default_locale);
      ctx.set('Content-Security-Policy', SMS_PAGE_CSP);
      ctx.set('Referrer-Policy', 'no-referrer');
      return;
    }
    throw apiError('unknown_action');
  };
}

// ---- the page ----------------------------------------------------------------------------------

// A table wider than the screen scrolls inside its own box (display:block), never the page; long words wrap.
const STYLE = [
  'body{font:15px/1.4 system-ui,sans-serif;margin:2rem;color:#222}',
  '@media (max-width:40rem){body{margin:1rem .75rem}}',
  'h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:2rem}',
  'h1,p,li{overflow-wrap:anywhere}',
  'table{border-collapse:collapse;display:block;max-width:100%;overflow-x:auto}',
  'th,td{text-align:left;padding:.3rem .8rem;border-bottom:1px solid #ddd}',
  'td.n{text-align:right;font-variant-numeric:tabular-nums}',
  '.low{color:#b00020;font-weight:600}.muted{color:#666;font-size:.9rem}',
].join('');

const SMS_PAGE_CSP = inlineStylePageCsp(STYLE);

const cells = (values: Array<string | number>, numeric: boolean[] = []) =>
  values.map((v, i) => `<td${numeric[i] ? ' class="n"' : ''}>${escapeHtml(String(v))}</td>`).join('');
const heads = (names: string[]) => `<tr>${names.map((name) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>`;

type LedgerReportData = Awaited<ReturnType<typeof ledgerReport>>;

const t = (locale: TextLocale) => SMS_TEXTS[locale];

function groupRow(group: LedgerGroup, locale: TextLocale): string {
  const low = group.sent >= 10 && group.conversion < 0.5;
  const counts = GROUP_COLUMNS.map((column) => group[column]);
  const channel = t(locale).channelNames[group.channel];
  return `<tr>${cells(group.provider ? [group.country || '—', group.provider, channel] : [group.country || '—', channel])}${cells(
    counts,
    counts.map(() => true),
  )}<td class="n${low ? ' low' : ''}">${readablePercent(group.conversion, locale)}</td></tr>`;
}

/**
 * Conversion by country and provider, blocks, breakers and the newest entries, in one language:
 * the service's (`mail.default_locale`), every state and heading included, times as local times.
 */
export function smsPage(report: LedgerReportData, sinceSeconds: number, language: string): string {
  const locale = textLocale(language);
  const t = SMS_TEXTS[locale];
  const when = (at: string | undefined) => (at === undefined ? '' : readableTime(at, locale));
  const hours = new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(sinceSeconds / 3600);
  const totals = report.totals.length
    ? `<table><thead>${heads([t.columns.country, t.columns.provider, t.columns.channel, ...GROUP_COLUMNS.map((c) => t.columns[c]), t.columns.conversion])}</thead><tbody>${report.totals.map((g) => groupRow(g, locale)).join('')}</tbody></table><p class="muted">${escapeHtml(t.legend)}</p>`
    : `<p>${escapeHtml(t.nothingSent)}</p>`;
  const byChannel = report.by_channel.length
    ? `<table><thead>${heads([t.columns.country, t.columns.channel, ...GROUP_COLUMNS.map((c) => t.columns[c]), t.columns.conversion])}</thead><tbody>${report.by_channel.map((g) => groupRow(g, locale)).join('')}</tbody></table>`
    : '';
  const notSent = report.not_sent.length
    ? `<table><thead>${heads([t.notSentColumns.provider, t.notSentColumns.channel, t.notSentColumns.reason, t.notSentColumns.count])}</thead><tbody>${report.not_sent
        .map(
          (row) =>
            `<tr>${cells([row.provider || '—', t.channelNames[row.channel], t.notSentReasons[row.reason], row.count], [false, false, false, true])}</tr>`,
        )
        .join('')}</tbody></table>`
    : `<p>${escapeHtml(t.noneNotSent)}</p>`;
  const blocks = report.blocks.length
    ? `<ul>${report.blocks.map((b) => `<li>${escapeHtml(t.block(b.range, when(b.until)))}</li>`).join('')}</ul>`
    : `<p>${escapeHtml(t.noBlocks)}</p>`;
  const providers = `<table><thead>${heads([t.providerColumns.provider, t.providerColumns.channel, t.providerColumns.circuit, t.providerColumns.receipts])}</thead><tbody>${report.breakers
    .map(
      (b) => `<tr>${cells([b.provider, t.channelNames[b.channel], t.circuit[b.state], t.receipts(b.receipts)])}</tr>`,
    )
    .join('')}</tbody></table>`;
  const c = t.entryColumns;
  const entries = report.entries.length
    ? `<table><thead>${heads([c.accepted, c.recipient, c.country, c.type, c.channel, c.provider, c.state, c.verified])}</thead><tbody>${report.entries
        .map(
          (e) =>
            `<tr>${cells([when(e.accepted_at), e.recipient, e.country, t.numberTypes[e.number_type as PhoneNumberType] ?? e.number_type, t.channelNames[e.channel], e.provider, t.states[e.state], when(e.verified_at)])}</tr>`,
        )
        .join('')}</tbody></table>`
    : '';
  return [
    '<!doctype html>',
    `<html lang="${locale}"><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<title>${escapeHtml(t.title)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<h1>${escapeHtml(t.heading(hours))}</h1>`,
    `<p class="muted">${escapeHtml(t.since(when(report.since)))} ${escapeHtml(t.otherPeriods)}: <code>?since=&lt;s&gt;</code>; JSON: <code>${LEDGER_PATH}</code>; <code>npm run ledger -- --since 1h</code>.</p>`,
    `<h2>${escapeHtml(t.byChannel)}</h2>`,
    byChannel,
    `<h2>${escapeHtml(t.byGroup)}</h2>`,
    totals,
    `<h2>${escapeHtml(t.notSentHeading)}</h2>`,
    notSent,
    `<h2>${escapeHtml(t.blocksHeading)}</h2>`,
    blocks,
    `<h2>${escapeHtml(t.challengesHeading)}</h2>`,
    `<p>${escapeHtml(t.challenges(report.challenges))}</p>`,
    `<h2>${escapeHtml(t.loginsHeading)}</h2>`,
    `<p>${escapeHtml(t.logins(report.logins))}</p>`,
    `<h2>${escapeHtml(t.providersHeading)}</h2>`,
    providers,
    `<h2>${escapeHtml(t.newestHeading)}</h2>`,
    entries,
    '</body></html>',
  ].join('\n');
}
