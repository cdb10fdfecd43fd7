import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseDrillOptions } from '../../scripts/drill/options';
import { durationSeconds, scaleRules } from '../../scripts/drill/rules';
import { RULES, drillService } from '../../scripts/drill/run';
import { ALERTS, HEALTHY } from '../../scripts/drill/table';
import { Client, SEEDED_LOGINS } from '../../scripts/drill/traffic';
import { promtool } from '../ops/prometheus-server';

/*
 * npm run drill (scripts/drill.ts): its table names every shipped alert, its faster clock keeps
 * the rules valid and their meaning, and a shortened run plays the faults on real services and a
 * real Prometheus: each alert fires on its fault within its time, none on healthy traffic.
 */

const ROOT = join(__dirname, '..', '..');

interface RuleFile {
  groups: Array<{ rules: Array<{ alert?: string; for?: string; expr: string }> }>;
}

describe('the drill table', () => {
  it('has a fault for every alert of ops/prometheus/alerts.yml, and no other', async () => {
    const rules = parse(await readFile(RULES, 'utf8')) as RuleFile;
    const alerts = rules.groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));
    expect(Object.keys(ALERTS).sort()).toEqual([...alerts].sort());
  });
});

describe('the rules on the drill clock', () => {
  it('divides every for and range window by the factor, keeping windows at 5 s and for at 1 s at least', async () => {
    const text = await readFile(RULES, 'utf8');
    const scaled = scaleRules(text, 60);
    const before = (parse(text) as RuleFile).groups.flatMap((g) => g.rules);
    const after = (parse(scaled) as RuleFile).groups.flatMap((g) => g.rules);
    for (const [i, rule] of before.entries()) {
      if (rule.for) expect(durationSeconds(after[i]!.for!)).toBe(Math.max(1, durationSeconds(rule.for) / 60));
      const windows = (expr: string) => [...expr.matchAll(/\[([^\]:]+)\]/g)].map((m) => durationSeconds(m[1]!));
      expect(windows(after[i]!.expr)).toEqual(windows(rule.expr).map((s) => Math.max(5, s / 60)));
    }
    expect(scaled).toContain('[1440000ms]');
    expect(() => scaleRules(text, 0.5)).toThrow('factor');
  });

  it('stays valid rules for promtool', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lfa-drill-rules-'));
    try {
      await writeFile(join(dir, 'alerts.yml'), scaleRules(await readFile(RULES, 'utf8'), 60));
      const run = promtool(['check', 'rules', 'alerts.yml'], dir);
      expect({ status: run.status, output: run.output }).toEqual({
        status: 0,
        output: expect.stringContaining('SUCCESS'),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the drill command line', () => {
  it('reads its options, refuses what it cannot run, and has a --help', () => {
    expect(parseDrillOptions(['--help'])).toBe('help');
    expect(parseDrillOptions([])).toEqual({ factor: 20, only: [], parallel: 3, short: false });
    expect(parseDrillOptions(['--short', '--only', 'UpstreamErrors, SmsPumping'])).toEqual({
      factor: 60,
      only: ['UpstreamErrors', 'SmsPumping'],
      parallel: 6,
      short: true,
    });
    expect(() => parseDrillOptions(['--factor', '0'])).toThrow('--factor 0: a number from 1 to 600');
    expect(() => parseDrillOptions(['--bogus'])).toThrow('npm run drill -- --help');
  });
});

/** The alerts the test command drills: all but the three that need minutes even at factor 60 (an hour's window, a backlog filled in real time), which `npm run drill` plays. */
const SHORT = Object.keys(ALERTS).filter(
  (a) => !['SmsDeliveryRateDropping', 'LoginCompletionFalling', 'IngestBacklogGrowing'].includes(a),
);

describe("the healthy run's people", () => {
  // Were their codes never taken, the pumping defence would rightly call their ranges a campaign and the drill would
  // page on honest traffic; this holds the traffic to what it says it is.
  it('take the codes they ask for, by phone and by email, after a resend or a wrong guess, and log in', async () => {
    const service = await drillService(HEALTHY);
    try {
      const client = new Client(service, 9);
      expect(await client.codeVerified(client.phone(), { resend: true })).toBe(true);
      expect(await client.codeVerified(client.phone('3477'), { typo: true })).toBe(true);
      expect(await client.codeVerified(`person.${client.phone().slice(3)}@example.com`, { typo: true })).toBe(true);
      expect(await client.login(SEEDED_LOGINS[0])).toBe(true);
    } finally {
      await service.close();
    }
  });
});

describe('a shortened drill on real services and a real Prometheus', () => {
  it('fires each alert on its fault within its time, and none on healthy traffic', async () => {
    const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
    const child = spawn(tsx, [join(ROOT, 'scripts', 'drill.ts'), '--short', '--only', SHORT.join(',')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    // On failure the drill's own lines say which alert and why.
    expect({ code, output }).toEqual({
      code: 0,
      output: expect.stringContaining('every alert fired on its fault and none on healthy traffic'),
    });
    for (const alert of SHORT) {
      expect(output).toMatch(
        new RegExp(`^${alert} +.+: fired in [\\d.]+ s \\(within [\\d.]+ s\\); silent on healthy traffic$`, 'm'),
      );
      // A progress line per alert while it runs.
      expect(output).toContain(`drill: ${alert} fired after`);
    }
  }, 360_000);
});
