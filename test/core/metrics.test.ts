import nock from 'nock';
import pino from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { defineAction, type Action } from '../../src/actions/action';
import { createUpstream } from '../../src/clients/http';
import { apiError } from '../../src/core/errors';
import type { Deps } from '../../src/domain/deps';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';

const UPSTREAM = 'http://identity.test';

const echo = defineAction({
  name: 'echo',
  request: z.object({}).loose(),
  handler: async () => ({ data: { ok: true } }),
});
const refuse = defineAction({
  name: 'refuse',
  request: z.object({}),
  handler: async () => {
    throw apiError('phone_taken');
  },
});
const lookup = defineAction({
  name: 'lookup',
  request: z.object({}),
  handler: async (_input, ctx) => {
    // An upstream as the clients build one: it reports each call to the process's metrics.
    const upstream = createUpstream({
      name: 'identity',
      label: 'identità',
      timeoutMs: 2000,
      log: pino({ level: 'silent' }),
      observe: ctx.deps.metrics.observeUpstream,
    });
    await upstream.call(ctx, { endpoint: 'users_get', method: 'POST', url: `${UPSTREAM}/users/get` });
    return { data: {} };
  },
});
const actions = new Map<string, Action>([echo, refuse, lookup].map((a) => [a.name, a as Action]));

const METRICS_TOKEN = 'metrics-token-0123456789';
const opened: Deps[] = [];
function setup(metrics: Record<string, unknown> = { token: METRICS_TOKEN }) {
  const deps = testDeps(testConfig({ metrics }));
  opened.push(deps);
  return { deps, server: testApp(deps, { actions }).callback() };
}

async function values(deps: Deps, name: string) {
  const metric = deps.metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values;
}

const valueOf = async (deps: Deps, name: string, labels: Record<string, string>) =>
  (await values(deps, name)).find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;

useNock();
afterAll(async () => {
  for (const deps of opened) await deps.close();
});

describe('GET /metrics', () => {
  it('serves the Prometheus text format with the service metrics and the process defaults', async () => {
    const { server } = setup();
    const res = await request(server).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toContain('# TYPE lfa_requests_total counter');
    expect(res.text).toContain('# TYPE lfa_request_duration_seconds histogram');
    expect(res.text).toContain('lfa_process_cpu_user_seconds_total');
  });

  it('answers 404 saying how to enable metrics when metrics.token is empty, and no metric', async () => {
    const { server } = setup({ token: '' });
    for (const authorization of [undefined, 'Bearer ', `Bearer ${METRICS_TOKEN}`]) {
      const req = request(server).get('/metrics');
      const res = await (authorization === undefined ? req : req.set('authorization', authorization));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        success: false,
        error: expect.stringContaining('metrics.token'),
        data: { reason: 'metrics_not_enabled', keys: ['metrics.token', 'metrics.port'] },
      });
      expect(res.text).not.toContain('lfa_');
    }
  });

  it.each([
    ['no Authorization', undefined],
    ['a wrong token', 'Bearer metrics-token-0123456780'],
    ['a prefix of the token', `Bearer ${METRICS_TOKEN.slice(0, -1)}`],
    ['the token without Bearer', METRICS_TOKEN],
    ['Basic credentials', `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`],
  ])('answers 401 with the envelope to %s', async (_label, authorization) => {
    const { server } = setup();
    const req = request(server).get('/metrics');
    const res = await (authorization === undefined ? req : req.set('authorization', authorization));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body).toEqual({ success: false, error: expect.any(String), data: { reason: 'unauthorized' } });
    expect(res.text).not.toContain('lfa_');
  });

  it('answers 200 to the configured Bearer token', async () => {
    const { server } = setup();
    const res = await request(server).get('/metrics').set('authorization', `bearer ${METRICS_TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('lfa_requests_total');
  });

  it('counts a request under its action and outcome ok, with its latency', async () => {
    const { deps, server } = setup();
    await request(server).post('/echo').send({});
    await request(server).post('/?action=echo').send({});
    expect(await valueOf(deps, 'lfa_requests_total', { action: 'echo', outcome: 'ok', status: '200' })).toBe(2);
    expect(await valueOf(deps, 'lfa_request_duration_seconds', { action: 'echo', outcome: 'ok', le: '+Inf' })).toBe(2);
  });

  it('counts a business failure under its reason', async () => {
    const { deps, server } = setup();
    await request(server).post('/refuse').send({});
    expect(await valueOf(deps, 'lfa_requests_total', { action: 'refuse', outcome: 'phone_taken', status: '200' })).toBe(
      1,
    );
  });

  it('counts a request that fails validation under invalid_request', async () => {
    const { deps, server } = setup();
    await request(server).post('/refuse').send([1]);
    expect(await valueOf(deps, 'lfa_requests_total', { action: 'refuse', outcome: 'invalid_request' })).toBe(1);
  });

  it('labels an unknown action as unknown and never uses the raw path', async () => {
    const { deps, server } = setup();
    await request(server).post('/393331234567').send({});
    await request(server).post('/a/b/393331234567').send({});
    const text = await deps.metrics.render();
    expect(text).not.toContain('393331234567');
    expect(
      await valueOf(deps, 'lfa_requests_total', { action: 'unknown', outcome: 'unknown_action', status: '404' }),
    ).toBe(2);
  });

  it('labels GET endpoints by their route', async () => {
    const { deps, server } = setup();
    await request(server).get('/healthz');
    expect(await valueOf(deps, 'lfa_requests_total', { action: '/healthz', outcome: 'ok', status: '200' })).toBe(1);
  });

  it('keeps each app its own registry', async () => {
    const a = setup();
    const b = setup();
    await request(a.server).post('/echo').send({});
    expect(await valueOf(a.deps, 'lfa_requests_total', { action: 'echo' })).toBe(1);
    // b's series of echo exists (every action starts at 0), untouched by a's request.
    expect(await valueOf(b.deps, 'lfa_requests_total', { action: 'echo' })).toBe(0);
  });
});

describe('upstream call metrics', () => {
  it('counts upstream calls by client, endpoint, status and outcome, with their latency', async () => {
    const { deps, server } = setup();
    const ok = nock(UPSTREAM).post('/users/get').reply(200, {});
    await request(server).post('/lookup').send({});
    const failing = nock(UPSTREAM).post('/users/get').reply(503, {});
    await request(server).post('/lookup').send({});
    expect(ok.isDone() && failing.isDone()).toBe(true);
    // The status as its class: the label takes a known set of values, each series there from start.
    expect(
      await valueOf(deps, 'lfa_upstream_calls_total', {
        client: 'identity',
        endpoint: 'users_get',
        status: '2xx',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      await valueOf(deps, 'lfa_upstream_calls_total', {
        client: 'identity',
        endpoint: 'users_get',
        status: '5xx',
        outcome: 'http_error',
      }),
    ).toBe(1);
    expect(
      await valueOf(deps, 'lfa_upstream_call_duration_seconds', {
        client: 'identity',
        endpoint: 'users_get',
        outcome: 'ok',
        le: '+Inf',
      }),
    ).toBe(1);
    expect(await valueOf(deps, 'lfa_requests_total', { action: 'lookup', outcome: 'upstream_error' })).toBe(1);
  });

  it('counts an upstream call in the metrics of the app that made it only', async () => {
    const a = setup();
    const b = setup();
    nock(UPSTREAM).post('/users/get').reply(200, {});
    await request(a.server).post('/lookup').send({});
    expect(
      await valueOf(a.deps, 'lfa_upstream_calls_total', {
        client: 'identity',
        endpoint: 'users_get',
        status: '2xx',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      await valueOf(b.deps, 'lfa_upstream_calls_total', {
        client: 'identity',
        endpoint: 'users_get',
        status: '2xx',
        outcome: 'ok',
      }),
    ).toBe(0);
  });
});

describe('counting functions for other modules', () => {
  it('counts codes sent by channel and result', async () => {
    const { deps } = setup();
    deps.metrics.codeSent('sms', 'sent');
    deps.metrics.codeSent('sms', 'sent');
    deps.metrics.codeSent('email', 'failed');
    expect(await valueOf(deps, 'lfa_otp_codes_sent_total', { channel: 'sms', result: 'sent' })).toBe(2);
    expect(await valueOf(deps, 'lfa_otp_codes_sent_total', { channel: 'email', result: 'failed' })).toBe(1);
  });

  it('counts verifications by result', async () => {
    const { deps } = setup();
    deps.metrics.verification('invalid');
    deps.metrics.verification('ok');
    expect(await valueOf(deps, 'lfa_otp_verifications_total', { result: 'invalid' })).toBe(1);
    expect(await valueOf(deps, 'lfa_otp_verifications_total', { result: 'ok' })).toBe(1);
  });

  it('shows the ingest queue depth and counts ingest events by result', async () => {
    const { deps } = setup();
    deps.metrics.ingestQueueDepth(7);
    deps.metrics.ingestQueueDepth(3);
    deps.metrics.ingest('failed');
    deps.metrics.ingest('delivered');
    expect(await valueOf(deps, 'lfa_ingest_queue_depth', {})).toBe(3);
    expect(await valueOf(deps, 'lfa_ingest_events_total', { result: 'failed' })).toBe(1);
  });

  it('counts rate-limit refusals by limit', async () => {
    const { deps } = setup();
    deps.metrics.rateLimitRefused('sends_per_ip_per_hour');
    expect(await valueOf(deps, 'lfa_rate_limit_refusals_total', { limit: 'sends_per_ip_per_hour' })).toBe(1);
    expect(await deps.metrics.render()).toContain('lfa_rate_limit_refusals_total{limit="sends_per_ip_per_hour"} 1');
  });
});

describe('the exposition after some requests', () => {
  // Counts are kept in plain structures and handed to prom-client at scrape (src/core/metrics.ts):
  // what a scrape reads must be what prom-client counting each request itself wrote, line for line.
  it('renders the same series, labels, values and order as counting in prom-client', async () => {
    const { deps, server } = setup();
    nock(UPSTREAM).post('/users/get').reply(200, {});
    await request(server).post('/echo').send({});
    await request(server).post('/refuse').send({});
    await request(server).post('/echo').send({});
    await request(server).post('/lookup').send({});
    await request(server).get('/healthz');
    deps.metrics.codeSent('sms', 'sent');
    deps.metrics.codeSent('email', 'failed');
    deps.metrics.codeSent('sms', 'sent');
    deps.metrics.verification('ok');
    deps.metrics.smsSend('gateway', 'IT', 'accepted', 40);
    deps.metrics.smsSend('gateway', 'IT', 'accepted', 30);
    deps.metrics.smsSend('bad name!', 'xx', 'failover', 20_000, 'whatsapp');
    deps.metrics.funnelRequest('phone_login', '10', 'ok', 12);
    deps.metrics.funnelRequest('phone_login', '10', 'ok');
    deps.metrics.funnelReached('phone_login', '10');
    const text = await deps.metrics.render();
    // Durations vary: their buckets are read apart from their sums. The series every start has at 0 are read apart too (below).
    const lines = text
      .split('\n')
      .filter(
        (line) =>
          /^lfa_(requests_total|otp_codes_sent_total|otp_verifications_total|sms_sends_total|funnel_requests_total|funnel_steps_reached_total)\{/.test(
            line,
          ) && !line.endsWith(' 0'),
      );
    expect(lines).toEqual([
      'lfa_requests_total{action="echo",outcome="ok",status="200"} 2',
      'lfa_requests_total{action="lookup",outcome="ok",status="200"} 1',
      'lfa_requests_total{action="/healthz",outcome="ok",status="200"} 1',
      'lfa_requests_total{action="refuse",outcome="phone_taken",status="200"} 1',
      'lfa_otp_codes_sent_total{channel="sms",result="sent"} 2',
      'lfa_otp_codes_sent_total{channel="email",result="failed"} 1',
      'lfa_otp_verifications_total{result="ok"} 1',
      'lfa_sms_sends_total{provider="gateway",channel="sms",country="IT",result="accepted"} 2',
      'lfa_sms_sends_total{provider="other",channel="whatsapp",country="ZZ",result="failover"} 1',
      'lfa_funnel_requests_total{journey="phone_login",step="10",outcome="ok"} 2',
      'lfa_funnel_steps_reached_total{journey="phone_login",step="10"} 1',
    ]);
    const sms = text.split('\n').filter((line) => line.startsWith('lfa_sms_provider_duration_seconds'));
    expect(sms).toEqual([
      ...[0.01, 0.025].map(
        (le) => `lfa_sms_provider_duration_seconds_bucket{le="${le}",provider="gateway",outcome="accepted"} 0`,
      ),
      ...[0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, '+Inf'].map(
        (le) => `lfa_sms_provider_duration_seconds_bucket{le="${le}",provider="gateway",outcome="accepted"} 2`,
      ),
      'lfa_sms_provider_duration_seconds_sum{provider="gateway",outcome="accepted"} 0.07',
      'lfa_sms_provider_duration_seconds_count{provider="gateway",outcome="accepted"} 2',
      ...[0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].map(
        (le) => `lfa_sms_provider_duration_seconds_bucket{le="${le}",provider="other",outcome="failed"} 0`,
      ),
      ...[20, 30, '+Inf'].map(
        (le) => `lfa_sms_provider_duration_seconds_bucket{le="${le}",provider="other",outcome="failed"} 1`,
      ),
      'lfa_sms_provider_duration_seconds_sum{provider="other",outcome="failed"} 20',
      'lfa_sms_provider_duration_seconds_count{provider="other",outcome="failed"} 1',
    ]);
    const screen = text
      .split('\n')
      .filter((line) => line.startsWith('lfa_funnel_step_seconds') && line.includes('journey="phone_login"'));
    expect(screen).toEqual([
      ...[1, 2, 3, 5, 10].map((le) => `lfa_funnel_step_seconds_bucket{le="${le}",journey="phone_login",step="10"} 0`),
      ...[15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1800, 3600, '+Inf'].map(
        (le) => `lfa_funnel_step_seconds_bucket{le="${le}",journey="phone_login",step="10"} 1`,
      ),
      'lfa_funnel_step_seconds_sum{journey="phone_login",step="10"} 12',
      'lfa_funnel_step_seconds_count{journey="phone_login",step="10"} 1',
    ]);
    // One request histogram series per action and outcome, its buckets in order, each count the series' requests.
    const counts = text.split('\n').filter((line) => line.startsWith('lfa_request_duration_seconds_count'));
    expect(counts.filter((line) => !line.endsWith(' 0'))).toEqual([
      'lfa_request_duration_seconds_count{action="echo",outcome="ok"} 2',
      'lfa_request_duration_seconds_count{action="refuse",outcome="phone_taken"} 1',
      'lfa_request_duration_seconds_count{action="lookup",outcome="ok"} 1',
      'lfa_request_duration_seconds_count{action="/healthz",outcome="ok"} 1',
    ]);
    const echoBuckets = text
      .split('\n')
      .filter((line) => line.startsWith('lfa_request_duration_seconds_bucket{') && line.includes('action="echo"'));
    expect(echoBuckets.map((line) => /le="([^"]+)"/.exec(line)![1])).toEqual([
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '20',
      '+Inf',
    ]);
    expect(echoBuckets.at(-1)).toBe('lfa_request_duration_seconds_bucket{le="+Inf",action="echo",outcome="ok"} 2');
    // A metric nobody counted yet shows its HELP and TYPE, and no series.
    expect(text).toContain('# HELP lfa_sms_receipts_total Delivery receipts recorded');
    expect(text).not.toMatch(/^lfa_sms_receipts_total\{/m);
  });
});
