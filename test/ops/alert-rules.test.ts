import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { promtool } from './prometheus-server';

/*
 * ops/prometheus/alerts.yml under promtool: the rules are valid, and alerts.test.yml (synthetic
 * series) passes. Each alert has a test in which it fires, and no test names an alert that does
 * not exist: a misspelt alertname with `exp_alerts: []` would pass while testing nothing.
 */

const DIR = join(__dirname, '..', '..', 'ops', 'prometheus');

interface RuleFile {
  groups: Array<{
    name: string;
    rules: Array<{ alert?: string; record?: string; expr: string; labels?: Record<string, string> }>;
  }>;
}
interface TestFile {
  rule_files: string[];
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

const rules = parse(readFileSync(join(DIR, 'alerts.yml'), 'utf8')) as RuleFile;
const tests = parse(readFileSync(join(DIR, 'alerts.test.yml'), 'utf8')) as TestFile;
const alerts = rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));
const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);

describe('the alert rules under promtool', () => {
  it('are valid rules', () => {
    const run = promtool(['check', 'rules', 'alerts.yml'], DIR);
    expect({ status: run.status, output: run.output }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS'),
    });
  });

  it('pass their tests on synthetic series', () => {
    expect(tests.rule_files).toEqual(['alerts.yml']);
    const run = promtool(['test', 'rules', 'alerts.test.yml'], DIR);
    // On failure the output names the test and the alerts expected and got.
    expect({ status: run.status, output: run.output }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS'),
    });
  });

  it('has a test in which each alert fires', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    const fired = new Set(cases.filter((c) => c.exp_alerts.length > 0).map((c) => c.alertname));
    expect(alerts.filter((a) => !fired.has(a))).toEqual([]);
  });

  it('tests only alerts that exist', () => {
    expect(cases.map((c) => c.alertname).filter((name) => !alerts.includes(name))).toEqual([]);
  });

  it('is listed, each alert, in docs/operations.md, which lists no other', () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const section = doc.slice(
      doc.indexOf('## Alerts and dashboard'),
      doc.indexOf('\n## ', doc.indexOf('## Alerts and dashboard') + 1),
    );
    const listed = [...section.matchAll(/^\| `(\w+)` \| (critical|warning) \|/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...alerts].sort());
    // And with the severity the rule carries.
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      if (rule.alert) expect(section).toContain(`| \`${rule.alert}\` | ${rule.labels?.severity} |`);
    }
  });

  it('covers what the service needs watched', () => {
    // The concerns of docs/operations.md's alert list, each by the series it reads.
    const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr)).join('\n');
    for (const series of [
      'lfa_upstream_calls_total',
      'lfa_upstream_call_duration_seconds_bucket',
      'lfa_sms_breaker_state',
      'lfa_sms_receipts_total',
      'lfa_sms_refusals_total',
      'lfa_otp_verifications_total',
      'lfa_funnel_journeys_total',
      'lfa_ingest_queue_depth',
      'lfa_ingest_events_total',
      'outcome="store_unavailable"',
      'status=~"5.."',
    ]) {
      expect(exprs).toContain(series);
    }
  });
});
