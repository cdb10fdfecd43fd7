import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { JOURNEY_IDS } from '../../machines';
import { apiError } from '../core/errors';
import type { Deps } from '../domain/deps';
import { funnelReader } from '../domain/guard';
import {
  alignRange,
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  MINUTE_READ_LIMIT_MS,
  MINUTE_RETENTION_MS,
  type FunnelRange,
} from '../domain/funnel/store';
import { funnelDiagrams } from '../domain/funnel/counting';
import { compareFigures, funnelFigures, type FunnelStats } from '../domain/funnel/figures';
import { FUNNEL_CSS } from './demo/funnel-css';
import { funnelPage } from './demo/funnel-page';
import { DEMO_CSP } from './page-csp';
import { keysOf } from './keys';

/*
 * The journey funnel for operators (docs/funnel.md): GET /flows/stats (JSON) and GET
 * /flows/funnel (the page, server-rendered, no script). Both answer only to funnelReader (the
 * internal key, `funnel.read_key`, or the sandbox), also where the demo is off: the counting
 * runs in production, and so must its reading. Every figure comes from
 * src/domain/funnel/figures.ts, so the JSON, the page and `npm run funnel` agree.
 */

const DURATION = /^(\d{1,4})([mhd])$/;
const UNIT_MS = { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS } as const;
/** The longest range kept (hour buckets live 30 days). */
const MAX_RANGE_MS = 30 * DAY_MS;

/** `90m`, `24h`, `7d` in ms; undefined when not one. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : undefined;
}

const instant = z
  .union([z.iso.datetime({ offset: true }), z.string().regex(/^\d{10,14}$/)])
  .transform((v) => (/^\d+$/.test(v) ? Number(v) : Date.parse(v)));
const since = z.string().refine((v) => durationMs(v) !== undefined, 'must be minutes, hours or days: 90m, 24h, 7d');

const funnelStatsQuery = z.strictObject({
  journey: z.enum(JOURNEY_IDS).optional(),
  since: since.optional(),
  from: instant.optional(),
  to: instant.optional(),
  /** A second range to compare with (before and after a release); `previous` is the range just before. */
  compare: z.literal('previous').optional(),
  compare_from: instant.optional(),
  compare_to: instant.optional(),
});
export type FunnelStatsQuery = z.infer<typeof funnelStatsQuery>;

/**
 * The ranges a query asks for, `[from, to)` on whole buckets (alignRange): "the last 24 hours" is
 * exactly 24 hours, the last one still filling; `previous` is the range of the same length just
 * before it, so the two never overlap; both share one bucket size, so they compare.
 */
function rangesOf(query: FunnelStatsQuery, now: number): { main: FunnelRange; other?: FunnelRange } {
  const to = query.to ?? now;
  const from = query.from ?? to - durationMs(query.since ?? '24h')!;
  const asked = [
    { from, to },
    ...(query.compare_from !== undefined
      ? [{ from: query.compare_from, to: query.compare_to ?? query.compare_from + (to - from) }]
      : []),
  ];
  for (const w of asked) {
    if (!(w.from < w.to && w.to - w.from <= MAX_RANGE_MS)) {
      throw apiError('invalid_request', {
        data: { issues: [{ path: 'from', message: 'from must be before to, at most 30 days apart' }] },
      });
    }
  }
  const earliest = Math.min(...asked.map((w) => w.from), query.compare === 'previous' ? from - (to - from) : from);
  const resolution: FunnelRange['resolution'] =
    to - from <= MINUTE_READ_LIMIT_MS && earliest >= now - MINUTE_RETENTION_MS + HOUR_MS ? 'minute' : 'hour';
  const main = alignRange(from, to, now, resolution);
  const length = main.to - main.from;
  const other =
    query.compare_from !== undefined
      ? alignRange(asked[1]!.from, asked[1]!.to, now, resolution)
      : query.compare === 'previous'
        ? ({ from: main.from - length, to: main.from, resolution } satisfies FunnelRange)
        : undefined;
  return { main, ...(other ? { other } : {}) };
}

/** The figures a query asks for. */
export async function funnelStats(deps: Pick<Deps, 'funnel' | 'now'>, query: FunnelStatsQuery): Promise<FunnelStats> {
  const now = deps.now();
  const { main, other } = rangesOf(query, now);
  const diagrams = await funnelDiagrams();
  const read = async (range: FunnelRange) => funnelFigures(diagrams, await deps.funnel.read(range, now), query.journey);
  const figures = await read(main);
  if (!other) return figures;
  const compared = await read(other);
  return { ...figures, compared, shifts: compareFigures(compared, figures) };
}

export function parseQuery(ctx: Context): FunnelStatsQuery {
  const parsed = funnelStatsQuery.safeParse(ctx.query);
  if (!parsed.success)
    throw apiError('invalid_request', {
      data: { issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
    });
  return parsed.data;
}

/** Whether the request may read the funnel: the internal key, `funnel.read_key`, or the sandbox. */
export const mayReadFunnel = (deps: Deps, ctx: Context): boolean => funnelReader({ deps, keys: keysOf(ctx) });

export function mountFunnel(router: Router, deps: Deps): void {
  const allowed = (ctx: Context) => {
    if (!mayReadFunnel(deps, ctx)) throw apiError('unauthorized');
    // Counts of who logs in when: no cache keeps them.
    ctx.set('Cache-Control', 'no-store');
  };
  router.get('/flows/stats', async (ctx) => {
    allowed(ctx);
    ctx.body = { success: true, error: null, data: await funnelStats(deps, parseQuery(ctx)) };
  });
  router.get('/flows/funnel.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = FUNNEL_CSS;
  });
  router.get('/flows/funnel', async (ctx) => {
    allowed(ctx);
    const query = parseQuery(ctx);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = funnelPage(
      await funnelStats(deps, query),
      query.from === undefined ? (query.since ?? '24h') : undefined,
    );
    ctx.set('Content-Security-Policy', DEMO_CSP);
    ctx.set('Referrer-Policy', 'no-referrer');
  });
}
