import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { deepMerge, loadConfig } from '../../src/core/config/load';
import { startService, type Service } from '../../src/service';
import { onFreePort } from '../../test/support/ports';
import { startRedisServer, type RedisServer } from '../../test/support/redis-server';
import { startPrometheus, type PrometheusServer } from '../lib/prometheus';
import { scaleRules, scaled } from './rules';
import { ALERTS, FAULTS, HEALTHY, type DrillRow, type Fault, type FaultName } from './table';
import { Client } from './traffic';

/*
 * One fault played: the service on its sandbox (and a Redis where the fault needs it), a real
 * Prometheus scraping it every second with the scaled rules, ordinary traffic, a baseline, the
 * fault, and Prometheus's alerts API read every half second until each alert of the fault fires
 * or its time (scaled, plus its real seconds and SLACK) has passed twice over.
 */

export const RULES = join(__dirname, '..', '..', 'ops', 'prometheus', 'alerts.yml');
/** Scrape, evaluation and notification rounding at 1 s intervals: allowed on top of every expected time. */
const SLACK_SECONDS = 5;
const silent = pino({ level: 'silent' });
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface AlertResult {
  alert: string;
  fault: string;
  /** Seconds from the fault to firing; undefined when it never fired. */
  firedAfter?: number;
  expected: number;
  /** Alerts firing on the healthy run, filled by the caller. */
  healthy?: boolean;
}

/** Where an alert must fire by, in seconds after its fault, at this factor. */
export const expectedSeconds = (row: DrillRow, factor: number): number =>
  scaled(row.within, factor) + (row.realSeconds ?? 0) + SLACK_SECONDS;

/** The drill's own configuration: the sandbox with its two SMS providers and two WhatsApp ones, every limit off but the challenge's. */
function drillConfig(fault: Fault, port: number, metricsPort: number, redis: RedisServer | undefined) {
  const base = {
    sandbox: { enabled: true },
    log: { level: 'silent' },
    // Codes one after the other to the sandbox's few accounts: the resend cooldown at its least.
    otp: { log_file: '', resend_cooldown_seconds: 1, ...(redis ? { store: 'redis' } : {}) },
    ...(redis ? { redis: { url: redis.url } } : {}),
    security: { secret: randomBytes(24).toString('hex') },
    server: { host: '127.0.0.1', port, trust_proxy_hops: 1 },
    metrics: { host: '127.0.0.1', port: metricsPort },
    // The faults are the drill's, not the limits': each person is an address of their own anyway.
    rate_limits: { enabled: false },
    challenge: { mode: 'off' },
    sms: { timeout_seconds: 2, allowed_regions: ['IT'], breaker: { failures: 3 } },
  };
  return loadConfig({ env: { NODE_ENV: 'development' }, overrides: deepMerge(base, fault.config ?? {}) });
}

interface Stage {
  service: Service;
  prometheus: PrometheusServer;
  redis?: RedisServer;
  client: Client;
  stops: Array<() => void>;
  dir: string;
  closed: boolean;
}

/** The service of a fault (or of the healthy run) on its sandbox, on free ports. */
export const drillService = (fault: Fault, redis?: RedisServer): Promise<Service> =>
  onFreePort((port) =>
    onFreePort((metricsPort) =>
      startService(drillConfig(fault, port, metricsPort, redis), { log: silent, otpLog: silent }),
    ),
  );

async function stage(fault: Fault, factor: number, lane: number): Promise<Stage> {
  const redis = fault.redis ? await startRedisServer() : undefined;
  const service = await drillService(fault, redis);
  const dir = await mkdtemp(join(tmpdir(), 'lfa-drill-'));
  const rules = join(dir, 'alerts.yml');
  await writeFile(rules, scaleRules(await readFile(RULES, 'utf8'), factor));
  const prometheus = await startPrometheus({ target: new URL(service.metricsUrl!).host, ruleFiles: [rules] });
  return { service, prometheus, redis, client: new Client(service, lane), stops: [], dir, closed: false };
}

async function teardown(s: Stage): Promise<void> {
  for (const stop of s.stops) stop();
  // DRILL_SHOW=<regex>: the service's series matching it as the fault ends, to see why an alert stayed silent.
  const show = process.env.DRILL_SHOW;
  if (show && s.service.metricsUrl) {
    const text = await fetch(`${s.service.metricsUrl}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    process.stdout.write(
      text
        .split('\n')
        .filter((l) => !l.startsWith('#') && new RegExp(show).test(l))
        .map((l) => `  ${l}\n`)
        .join(''),
    );
  }
  await s.prometheus.stop();
  // The service-down fault closed it already.
  await s.service.close().catch(() => undefined);
  await s.redis?.stop();
  await rm(s.dir, { recursive: true, force: true });
}

interface AlertsAnswer {
  alerts: Array<{ labels: Record<string, string>; state: 'firing' | 'pending' | 'inactive' }>;
}

const firing = async (prometheus: PrometheusServer): Promise<Set<string>> =>
  new Set(
    (await prometheus.api<AlertsAnswer>('alerts')).alerts
      .filter((a) => a.state === 'firing')
      .map((a) => a.labels.alertname!),
  );

/** Until Prometheus holds a few scrapes of the service at 0: its first scrape can take 5 s (target discovery). */
async function scraped(prometheus: PrometheusServer): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const answer = await prometheus
      .api<{ result: Array<{ value: [number, string] }> }>('query', {
        query: 'count_over_time(lfa_process_start_time_seconds[1m])',
      })
      .catch(() => undefined);
    if (Number(answer?.result[0]?.value[1] ?? 0) >= 3) return;
    await pause(250);
  }
  throw new Error('Prometheus did not scrape the service within 30 s');
}

/** Plays one fault for its alerts; `progress` is told of each alert as it fires or runs out of time. */
export async function playFault(
  name: FaultName,
  alerts: string[],
  factor: number,
  lane: number,
  progress: (result: AlertResult) => void,
): Promise<AlertResult[]> {
  const fault: Fault = FAULTS[name];
  const s = await stage(fault, factor, lane);
  const results = new Map(
    alerts.map((alert) => [
      alert,
      { alert, fault: fault.says, expected: expectedSeconds(ALERTS[alert]!, factor) } as AlertResult,
    ]),
  );
  try {
    const ctx = { service: s.service, client: s.client, redis: s.redis, factor };
    s.stops.push(...(fault.traffic?.(ctx) ?? []));
    await scraped(s.prometheus);
    await pause((fault.baselineSeconds ?? 3) * 1000);
    const started = Date.now();
    s.stops.push(...((await fault.inject(ctx)) ?? []));
    const deadline = started + 2000 * Math.max(...[...results.values()].map((r) => r.expected));
    const waiting = new Set(alerts);
    while (waiting.size > 0 && Date.now() < deadline) {
      await pause(500);
      const now = await firing(s.prometheus).catch(() => new Set<string>());
      for (const alert of [...waiting]) {
        if (!now.has(alert)) continue;
        waiting.delete(alert);
        const result = results.get(alert)!;
        result.firedAfter = (Date.now() - started) / 1000;
        progress(result);
      }
    }
    for (const alert of waiting) progress(results.get(alert)!);
    return [...results.values()];
  } finally {
    await teardown(s);
  }
}

/** Ordinary traffic for `seconds`: the alerts that fired meanwhile (none, when the rules are right). */
export async function playHealthy(seconds: number, factor: number, lane: number): Promise<Set<string>> {
  const s = await stage(HEALTHY, factor, lane);
  const fired = new Set<string>();
  try {
    const ctx = { service: s.service, client: s.client, factor };
    await HEALTHY.inject(ctx);
    s.stops.push(...(HEALTHY.traffic?.(ctx) ?? []));
    await scraped(s.prometheus);
    const deadline = Date.now() + seconds * 1000;
    while (Date.now() < deadline) {
      await pause(500);
      for (const alert of await firing(s.prometheus).catch(() => new Set<string>())) fired.add(alert);
    }
    return fired;
  } finally {
    await teardown(s);
  }
}
