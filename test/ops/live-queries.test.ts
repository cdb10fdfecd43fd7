import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { parse } from 'yaml';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { onFreePort } from '../support/ports';
import { startPrometheus, type PrometheusServer } from './prometheus-server';

/*
 * The shipped alerts (ops/prometheus/alerts.yml) and dashboard (ops/grafana/login-frontend.json)
 * against a real Prometheus scraping a running service that a few journeys went through: every
 * rule loads and evaluates with health ok, every panel's and rule's query (and those
 * docs/operations.md offers) parses and runs, and every series a query names is one Prometheus
 * got from the service, with the labels it matches on. A misspelt metric or label would
 * otherwise answer an empty result, silently, forever.
 */

const ROOT = join(__dirname, '..', '..');
const RULES = join(ROOT, 'ops', 'prometheus', 'alerts.yml');
const silent = pino({ level: 'silent' });

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}
interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string }>;
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
}

const rules = (parse(readFileSync(RULES, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops', 'grafana', 'login-frontend.json'), 'utf8')) as Dashboard;
const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
/** Grafana's own variables, as Grafana would fill them for a query of the last minutes. */
const grafana = (expr: string) => expr.replaceAll('$__rate_interval', '1m');
const queries = [
  ...dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ from: `panel "${p.title}" ${t.refId}`, expr: grafana(t.expr) })),
  ),
  ...rules.map((r) => ({ from: r.alert ? `alert ${r.alert}` : `record ${r.record}`, expr: r.expr })),
  // The queries docs/operations.md offers an operator, one a line under its comment.
  ...[...readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8').matchAll(/```promql\n([\s\S]*?)```/g)]
    .flatMap((block) => block[1]!.split('\n'))
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((expr) => ({ from: 'docs/operations.md', expr })),
];

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/** The selectors of a PromQL expression: each metric name with the label names its matchers use. */
function selectors(expr: string): Array<{ metric: string; labels: string[] }> {
  const found: Array<{ metric: string; labels: string[] }> = [];
  const text = expr
    // Strings first: a regex such as "5.." or "delivered|failed" holds no name.
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    // Grouping clauses name labels, not series.
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    // Range and subquery durations.
    .replace(/\[[^\]]*\]/g, ' ');
  const selector = /(?<![\w.:])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?/g;
  for (const match of text.matchAll(selector)) {
    const [, name, matchers, call] = match;
    if (call || KEYWORDS.has(name!.toLowerCase())) continue;
    const labels = [...(matchers ?? '').matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]!);
    found.push({ metric: name!, labels });
  }
  return found;
}

describe('alerts and dashboard on a real Prometheus scraping the service', () => {
  let service: Service;
  let prometheus: PrometheusServer;
  /** Each series name Prometheus holds, with the label names its series carry. */
  const held = new Map<string, Set<string>>();

  beforeAll(async () => {
    // Known ports: the sandbox's receipts are sent back to the service, Prometheus scrapes the metrics listener.
    service = await onFreePort((port) =>
      onFreePort((metricsPort) =>
        startService(
          testConfig({
            sandbox: { enabled: true },
            server: { host: '127.0.0.1', port },
            metrics: { host: '127.0.0.1', port: metricsPort },
            sms: { timeout_seconds: 1 },
            // One lookup a minute, so the second one is refused (lfa_rate_limit_refusals_total).
            rate_limits: { lookups_per_ip_per_minute: 1 },
          }),
          { log: silent, otpLog: silent },
        ),
      ),
    );
    await journeys(service);
    prometheus = await startPrometheus({ target: new URL(service.metricsUrl!).host, ruleFiles: [RULES] });
    // One scrape after the journeys, and every rule evaluated at least once.
    await eventually(
      async () => {
        const targets = await prometheus.api<{ activeTargets: Array<{ health: string; lastError: string }> }>(
          'targets',
        );
        expect(targets.activeTargets).toEqual([expect.objectContaining({ health: 'up', lastError: '' })]);
        const names = await prometheus.api<string[]>('label/__name__/values');
        expect(names).toEqual(
          expect.arrayContaining([
            'lfa_sms_receipts_total',
            'lfa_sms_refusals_total',
            'lfa_rate_limit_refusals_total',
            'lfa_funnel_step_seconds_bucket',
          ]),
        );
        const groups = await prometheus.api<{ groups: Array<{ rules: Array<{ health: string }> }> }>('rules');
        expect(groups.groups.flatMap((g) => g.rules).filter((r) => r.health === 'unknown')).toEqual([]);
        // Prometheus hands discovered targets to the scraper every 5 s: the first scrape comes that late.
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const series = await prometheus.api<Array<Record<string, string>>>('series', {
      'match[]': '{job="login-frontend"}',
    });
    for (const labels of series) {
      const set = held.get(labels.__name__!) ?? new Set<string>();
      for (const name of Object.keys(labels)) set.add(name);
      held.set(labels.__name__!, set);
    }
  }, 120_000);
  afterAll(async () => {
    await prometheus?.stop();
    await service?.close();
  });

  it('scrapes the service', async () => {
    const targets = await prometheus.api<{ activeTargets: Array<{ health: string; lastError: string }> }>('targets');
    expect(targets.activeTargets).toEqual([expect.objectContaining({ health: 'up', lastError: '' })]);
  });

  it('loads every rule of alerts.yml, each evaluated with health ok', async () => {
    const groups = await prometheus.api<{
      groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }>;
    }>('rules');
    const loaded = groups.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(rules.map((r) => r.alert ?? r.record).sort());
    expect(loaded.filter((r) => r.health !== 'ok')).toEqual([]);
  });

  it('runs every panel query and rule expression without error', async () => {
    expect(queries.filter((q) => q.from === 'docs/operations.md').length).toBeGreaterThan(10);
    expect(queries.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const { from, expr } of queries) {
      await prometheus.api('query', { query: expr }).catch((err: Error) => failures.push(`${from}: ${err.message}`));
    }
    expect(failures).toEqual([]);
  });

  it('names only series the service exports, with labels those series carry', () => {
    const wrong: string[] = [];
    for (const { from, expr } of queries) {
      const found = selectors(expr);
      if (found.length === 0) wrong.push(`${from}: no series found in ${expr}`);
      for (const { metric, labels } of found) {
        if (recorded.has(metric)) continue;
        const carried = held.get(metric);
        if (!carried) wrong.push(`${from}: ${metric} is not a series the service exports`);
        else
          for (const label of labels) if (!carried.has(label)) wrong.push(`${from}: ${metric} has no label ${label}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('names its recorded series level:metric:operation, under lfa:', () => {
    for (const name of recorded) expect(name).toMatch(/^lfa:[a-z0-9_]+:[a-z0-9_]+$/);
  });

  it('is a dashboard Grafana imports: one Prometheus datasource variable that every panel uses', () => {
    expect(dashboard.templating.list).toEqual([
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    ]);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect({ title: panel.title, datasource: panel.datasource }).toEqual({
        title: panel.title,
        datasource: { type: 'prometheus', uid: '${datasource}' },
      });
      expect(panel.targets?.length).toBeGreaterThan(0);
    }
  });
});

describe('the selector reader of this test', () => {
  it('finds metric names and their matchers, not functions, clauses, strings or durations', () => {
    expect(
      selectors(
        'sum by (le, client) (rate(lfa_a_bucket{outcome!="ok", status!~"4.."}[5m])) / on (client) group_left lfa:b:c and lfa_d offset 1d > 0.5e1',
      ),
    ).toEqual([
      { metric: 'lfa_a_bucket', labels: ['outcome', 'status'] },
      { metric: 'lfa:b:c', labels: [] },
      { metric: 'lfa_d', labels: [] },
    ]);
    expect(selectors('histogram_quantile(0.95, sum by (le) (rate(x_bucket[10m:1m])))')).toEqual([
      { metric: 'x_bucket', labels: [] },
    ]);
  });
});

/** A few journeys, so that most series have samples: logins by phone and by email, a failover with receipts, refusals. */
async function journeys(service: Service): Promise<void> {
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${service.url}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as { success: boolean; data: Record<string, unknown> };
  };
  const code = async (to: string) => {
    const res = await fetch(`${service.url}/_sandbox/outbox?to=${encodeURIComponent(to)}`);
    return ((await res.json()) as { data: { code: string } }).data.code;
  };

  // A phone login through the journey actions (the funnel).
  const phone = '+393331234567';
  expect((await post('FeLogin', { identifier: phone })).data.next_step).toBe(14);
  expect((await post('FeVerifyOtp', { flow: 'phone', phone, otp_code: await code(phone) })).data.next_step).toBe(90);

  // An email code through the primitives: one wrong guess, then the right code.
  const email = 'giulia.bianchi@example.com';
  expect((await post('otp_generate', { uid: email })).success).toBe(true);
  expect((await post('verify_otp', { email, otp_code: '000000' })).data.reason).toBe('invalid');
  expect((await post('verify_otp', { email, otp_code: await code(email) })).success).toBe(true);

  // The first provider fails: the code goes by the second, whose receipt comes back.
  service.sandbox!.smsFaults.set('gateway', 'error_5xx');
  expect((await post('otp_generate', { uid: '+393330000301' })).success).toBe(true);
  service.sandbox!.smsFaults.set('gateway', 'none');
  await eventually(async () => {
    const ledger = (await (await fetch(`${service.url}/_sms/ledger`)).json()) as {
      data: { entries: Array<{ state: string }> };
    };
    expect(ledger.data.entries[0]).toMatchObject({ state: 'delivered' });
  });

  // Refusals: a country outside sms.allowed_regions, and a lookup past its rate limit.
  expect((await post('otp_generate', { uid: '+12025550143' })).data.reason).toBe('region_not_allowed');
  await post('search_user', { phone });
  expect((await post('search_user', { phone })).data.reason).toBe('rate_limited');
}
