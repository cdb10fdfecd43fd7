import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import request from 'supertest';
import { createUpstream } from '../../src/clients/http';
import { createTracing, type Tracing } from '../../src/core/tracing';
import { testApp, testConfig, testDeps } from '../support/app';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';

/*
 * The edges of tracing: whose traceparent is continued, what sampling keeps, the header an
 * upstream receives, and nothing at all when tracing is off.
 */

const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const UNSAMPLED_CALLER = '00-5bf92f3577b34da6a3ce929d0e0e4736-10f067aa0ba902b7-00';

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

const appWith = (tree: object) => {
  const config = testConfig({ tracing: { enabled: true, otlp_url: receiver.url }, ...tree });
  const deps = testDeps(config);
  return { deps, server: testApp(deps).callback() };
};
const traceIdOf = (traceresponse: string | undefined) => /^00-([0-9a-f]{32})-/.exec(traceresponse ?? '')?.[1];

describe('whose trace a request continues', () => {
  it('continues a caller behind a trusted proxy hop', async () => {
    const { deps, server } = appWith({ server: { trust_proxy_hops: 1 } });
    const answer = await request(server).get('/healthz').set('traceparent', CALLER);
    expect(traceIdOf(answer.headers.traceresponse)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    await deps.close();
  });

  it("starts its own trace when the caller is the open internet: a chosen trace id could join or flood an operator's traces", async () => {
    const { deps, server } = appWith({ server: { trust_proxy_hops: 0 } });
    const answer = await request(server).get('/healthz').set('traceparent', CALLER);
    const traceId = traceIdOf(answer.headers.traceresponse);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    await deps.tracing!.flush();
    await deps.close();
    // Exported as a root span: nothing points at the caller's span.
    const span = receiver.spans.find((s) => s.traceId === traceId);
    expect(span).toMatchObject({ name: 'GET /healthz', parentSpanId: undefined });
  });
});

describe('sampling', () => {
  it("keeps no new trace at ratio 0, but follows a trusted caller's decision either way", async () => {
    const { deps, server } = appWith({
      server: { trust_proxy_hops: 1 },
      tracing: { enabled: true, otlp_url: receiver.url, sample_ratio: 0 },
    });
    const own = await request(server).get('/healthz');
    const sampled = await request(server).get('/healthz').set('traceparent', CALLER.replace('4bf9', '6bf9'));
    const unsampled = await request(server).get('/healthz').set('traceparent', UNSAMPLED_CALLER);
    await deps.tracing!.flush();
    await deps.close();
    const exported = (response: request.Response) =>
      receiver.spans.filter((s) => s.traceId === traceIdOf(response.headers.traceresponse));
    expect(own.headers.traceresponse).toMatch(/-00$/);
    expect(exported(own)).toEqual([]);
    expect(exported(sampled).map((s) => s.name)).toEqual(['GET /healthz']);
    expect(unsampled.headers.traceresponse).toMatch(/^00-5bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/);
    expect(exported(unsampled)).toEqual([]);
  });
});

describe('an upstream call', () => {
  let upstream: Server;
  let received: IncomingHttpHeaders[];
  let tracing: Tracing;
  beforeAll(async () => {
    received = [];
    upstream = createServer((req, res) => {
      received.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    tracing = createTracing(testConfig({ tracing: { enabled: true, otlp_url: receiver.url } }).tracing)!;
  });
  afterAll(async () => {
    await tracing.shutdown();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('carries traceparent naming its own span, so the upstream’s trace joins this one', async () => {
    const client = createUpstream({ name: 'fake', label: 'fake', timeoutMs: 2000, log: pino({ level: 'silent' }) });
    const span = tracing.startRequest('GET', undefined, {});
    const { port } = upstream.address() as AddressInfo;
    await client.call(
      { requestId: 'r1', span },
      { endpoint: 'ping', method: 'GET', url: `http://127.0.0.1:${port}/ping` },
    );
    span.end();
    await tracing.flush();
    const call = receiver.spans.find((s) => s.traceId === span.traceId && s.name === 'fake.ping')!;
    expect(call).toMatchObject({ kind: 'client', parentSpanId: span.spanId });
    expect(received.at(-1)!.traceparent).toBe(`00-${span.traceId}-${call.spanId}-01`);
  });

  it('carries no traceparent when the request is not traced', async () => {
    const client = createUpstream({ name: 'fake', label: 'fake', timeoutMs: 2000, log: pino({ level: 'silent' }) });
    const { port } = upstream.address() as AddressInfo;
    await client.call({ requestId: 'r2' }, { endpoint: 'ping', method: 'GET', url: `http://127.0.0.1:${port}/ping` });
    expect(received.at(-1)!.traceparent).toBeUndefined();
  });
});

describe('tracing off (the default)', () => {
  it('makes no tracer, answers no traceresponse, and continues nobody', async () => {
    const deps = testDeps(testConfig({ server: { trust_proxy_hops: 1 } }));
    expect(deps.tracing).toBeUndefined();
    const answer = await request(testApp(deps).callback()).get('/healthz').set('traceparent', CALLER);
    expect(answer.status).toBe(200);
    expect(answer.headers.traceresponse).toBeUndefined();
    await deps.close();
  });
});
