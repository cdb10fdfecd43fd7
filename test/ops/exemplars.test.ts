import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { onFreePort } from '../support/ports';
import { startPrometheus, type PrometheusServer } from './prometheus-server';

/*
 * From a latency bucket to its trace: with tracing on, a real Prometheus with exemplar storage
 * scrapes the running service as OpenMetrics, and the request latency's buckets carry the trace id
 * of a request that landed there, the same id the answer named in `traceresponse`. Without the
 * OpenMetrics Accept header the exposition is the plain text format, as before.
 */

const silent = pino({ level: 'silent' });

interface ExemplarSeries {
  seriesLabels: Record<string, string>;
  exemplars: Array<{ labels: Record<string, string>; value: string }>;
}

describe('request latency exemplars, scraped by Prometheus', () => {
  let receiver: OtlpReceiver;
  let service: Service;
  let prometheus: PrometheusServer | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    service = await onFreePort((metricsPort) =>
      startService(
        testConfig({
          sandbox: { enabled: true },
          server: { host: '127.0.0.1', port: 0 },
          metrics: { host: '127.0.0.1', port: metricsPort },
          tracing: { enabled: true, otlp_url: receiver.url },
        }),
        { log: silent, otpLog: silent },
      ),
    );
  }, 30_000);
  afterAll(async () => {
    await prometheus?.stop();
    await service?.close();
    await receiver?.close();
  });

  it('links a bucket of lfa_request_duration_seconds to the trace of a request in it', async () => {
    const answer = await fetch(`${service.url}/FeLogin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: '+393331234567' }),
    });
    const traceId = /^00-([0-9a-f]{32})-/.exec(answer.headers.get('traceresponse')!)![1]!;

    const open = await fetch(`${service.metricsUrl!}/metrics`, {
      headers: { accept: 'application/openmetrics-text; version=1.0.0' },
    });
    expect(open.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
    const text = await open.text();
    expect(text).toMatch(
      new RegExp(`lfa_request_duration_seconds_bucket\\{[^}]*action="FeLogin"[^}]*\\} 1 # \\{trace_id="${traceId}"\\}`),
    );
    expect(text.trimEnd().endsWith('# EOF')).toBe(true);
    expect(text.match(/^# EOF$/gm)).toHaveLength(1);

    prometheus = await startPrometheus({
      target: new URL(service.metricsUrl!).host,
      ruleFiles: [],
      features: ['exemplar-storage'],
    });
    const found = await eventually(
      async () => {
        const now = Date.now() / 1000;
        const series = await prometheus!.api<ExemplarSeries[]>('query_exemplars', {
          query: 'lfa_request_duration_seconds_bucket{action="FeLogin"}',
          start: String(now - 600),
          end: String(now + 60),
        });
        const ids = series.flatMap((s) => s.exemplars.map((e) => e.labels.trace_id));
        expect(ids).toContain(traceId);
        return ids;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(found).toContain(traceId);
  }, 120_000);

  it('serves the plain text format, without exemplars, to a scrape that does not ask for OpenMetrics', async () => {
    const plain = await fetch(`${service.metricsUrl!}/metrics`);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await plain.text();
    expect(text).toContain('lfa_request_duration_seconds_bucket{');
    expect(text).not.toContain('trace_id');
  });
});
