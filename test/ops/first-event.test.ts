import { join } from 'node:path';
import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { onFreePort } from '../support/ports';
import { startPrometheus, type PrometheusServer } from './prometheus-server';

/*
 * A counter series that appears with its first event hides that event from rate() and
 * increase(), which read a series' first sample as its start. The service exports every series
 * of a known label set at 0 from start: here the real service on its sandbox, scraped before any
 * traffic, shows them at 0; then one 503 from the fake SMS gateway moves the upstream error
 * ratio of a real Prometheus loading the shipped rules.
 */

const RULES = join(__dirname, '..', '..', 'ops', 'prometheus', 'alerts.yml');
const silent = pino({ level: 'silent' });

interface Vector {
  resultType: 'vector';
  result: Array<{ metric: Record<string, string>; value: [number, string] }>;
}

describe('series at 0 before their first event, on the running service', () => {
  let service: Service;
  let prometheus: PrometheusServer | undefined;

  beforeAll(async () => {
    service = await onFreePort((port) =>
      onFreePort((metricsPort) =>
        startService(
          testConfig({
            sandbox: { enabled: true },
            server: { host: '127.0.0.1', port },
            metrics: { host: '127.0.0.1', port: metricsPort },
            sms: { timeout_seconds: 1, allowed_regions: ['IT', 'FR'] },
          }),
          { log: silent, otpLog: silent },
        ),
      ),
    );
  }, 30_000);
  afterAll(async () => {
    await prometheus?.stop();
    await service?.close();
  });

  it('exports every bounded series at 0 before any request', async () => {
    // The journeys' series are declared once their diagrams are replayed, just after start.
    const text = await eventually(
      async () => {
        const body = await (await fetch(`${service.metricsUrl!}/metrics`)).text();
        expect(body).toContain('lfa_funnel_steps_reached_total{journey="phone-login",step="90"} 0');
        return body;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    for (const line of [
      // Upstreams by status class, each endpoint of each client.
      'lfa_upstream_calls_total{client="sms",endpoint="send",status="5xx",outcome="http_error"} 0',
      'lfa_upstream_calls_total{client="identity",endpoint="login",status="timeout",outcome="timeout"} 0',
      'lfa_upstream_calls_total{client="collector",endpoint="ingest_login",status="network",outcome="unreachable"} 0',
      // Providers by channel, in each configured country.
      'lfa_sms_breaker_state{provider="gateway",channel="sms"} 0',
      'lfa_sms_breaker_state{provider="whatsapp",channel="whatsapp"} 0',
      'lfa_sms_sends_total{provider="twilio",channel="sms",country="FR",result="failover"} 0',
      // Results, reasons, signals and verdicts.
      'lfa_otp_codes_sent_total{channel="sms",result="failed"} 0',
      'lfa_otp_verifications_total{result="invalid"} 0',
      'lfa_ingest_events_total{result="dropped"} 0',
      'lfa_rate_limit_refusals_total{limit="verifies_per_ip_per_minute"} 0',
      'lfa_challenge_decisions_total{decision="challenged",signal="range_rate"} 0',
      'lfa_sms_refusals_total{reason="sms_destination_blocked",country="IT"} 0',
      'lfa_sms_range_verdicts_total{verdict="blocked",country="FR"} 0',
      // Actions and the readiness probe, ok and failing.
      'lfa_requests_total{action="otp_generate",outcome="internal_error",status="500"} 0',
      'lfa_requests_total{action="/readyz",outcome="store_unavailable",status="503"} 0',
      'lfa_funnel_requests_total{journey="phone-login",step="enteringIdentifier",outcome="ok"} 0',
    ]) {
      expect(text).toContain(line);
    }
    // Nothing was counted: every series of the service's own counters is at 0.
    const counted = text
      .split('\n')
      .filter(
        (l) =>
          /^lfa_(upstream_calls|otp_codes_sent|ingest_events|sms_sends|challenge_decisions|sms_refusals)_total\{/.test(
            l,
          ) && !l.endsWith(' 0'),
      );
    expect(counted).toEqual([]);
  });

  it('moves the upstream error ratio of a real Prometheus on the first 503', async () => {
    prometheus = await startPrometheus({ target: new URL(service.metricsUrl!).host, ruleFiles: [RULES] });
    const query = async (expr: string) => (await prometheus!.api<Vector>('query', { query: expr })).result;
    const selector = 'lfa_upstream_calls_total{client="sms", endpoint="send", status="5xx", outcome="http_error"}';
    // Prometheus holds the series at 0, scraped before the fault.
    await eventually(async () => expect((await query(selector)).map((r) => r.value[1])).toEqual(['0']), {
      timeoutMs: 20_000,
      intervalMs: 200,
    });

    // One code: the gateway answers 503, the next provider takes it.
    await fetch(`${service.sandbox!.baseUrl}/faults/sms/gateway/error_5xx`, { method: 'POST' });
    const res = await fetch(`${service.url}/otp_generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uid: '+393330000401' }),
    });
    expect(((await res.json()) as { success: boolean }).success).toBe(true);

    await eventually(
      async () => {
        expect((await query(`increase(${selector}[1m])`)).map((r) => Number(r.value[1]))).toEqual([expect.any(Number)]);
        const [ratio] = await query('lfa:upstream_errors:ratio_rate5m{client="sms", endpoint="send"}');
        expect(Number(ratio?.value[1])).toBeGreaterThan(0);
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    const [increase] = await query(`increase(${selector}[1m])`);
    expect(Number(increase!.value[1])).toBeGreaterThan(0);
  }, 120_000);
});
