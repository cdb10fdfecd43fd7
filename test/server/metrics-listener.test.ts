import { freePort, connectOutcome, onFreePort } from '../support/ports';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * `metrics.port` opens a second listener on `metrics.host` that serves GET /metrics without a
 * token (only the scrape network reaches it) and nothing else; the service port keeps its own
 * rule (404 without metrics.token).
 */

const start = (metrics: Record<string, unknown>, serverPort = 0) =>
  startService(
    testConfig({
      sandbox: { enabled: false },
      server: { host: '127.0.0.1', port: serverPort },
      metrics: { host: '127.0.0.1', ...metrics },
    }),
  );

describe('the metrics listener', () => {
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('is not opened when metrics.port is 0', async () => {
    service = await start({ port: 0 });
    expect(service.metricsServer).toBeUndefined();
    expect(service.metricsUrl).toBeUndefined();
  });

  it('serves GET /metrics without a token', async () => {
    let port = 0;
    service = await onFreePort((chosen) => start({ port: (port = chosen) }));
    expect(service.metricsUrl).toBe(`http://127.0.0.1:${port}`);
    await request(service.url).get('/healthz');
    const res = await request(service.metricsUrl!).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    // The service port's traffic, not the listener's own.
    expect(res.text).toContain('lfa_requests_total{action="/healthz",outcome="ok",status="200"} 1');
  });

  it('serves nothing else', async () => {
    service = await onFreePort((port) => start({ port }));
    const url = service.metricsUrl!;
    for (const res of [
      await request(url).get('/'),
      await request(url).get('/healthz'),
      await request(url).get('/openapi.json'),
      await request(url).get('/metrics/x'),
      await request(url).post('/metrics').send({}),
      await request(url).post('/otp_generate').send({ uid: '+39 333 123 4567' }),
      await request(url).post('/?action=newsletter_feed').send({}),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, error: expect.any(String), data: { reason: 'unknown_action' } });
    }
  });

  it('leaves the service port to its own rule: 404 without metrics.token', async () => {
    service = await onFreePort((port) => start({ port }));
    const res = await request(service.url).get('/metrics');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'metrics_not_enabled' } });
  });

  it('answers the token on the service port and no token on its own', async () => {
    service = await onFreePort((port) => start({ port, token: 'metrics-token-0123456789' }));
    expect((await request(service.url).get('/metrics')).status).toBe(401);
    expect(
      (await request(service.url).get('/metrics').set('authorization', 'Bearer metrics-token-0123456789')).status,
    ).toBe(200);
    expect((await request(service.metricsUrl!).get('/metrics')).status).toBe(200);
  });

  it('is closed with the service', async () => {
    let port = 0;
    const running = await onFreePort((chosen) => start({ port: (port = chosen) }));
    await running.close();
    expect(await connectOutcome(port)).toBe('ECONNREFUSED');
  });

  it('fails the start-up, releasing the service port, when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const { port } = taken.address() as AddressInfo;
    const servicePort = await freePort();
    try {
      await expect(start({ port }, servicePort)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(await connectOutcome(servicePort)).toBe('ECONNREFUSED');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
