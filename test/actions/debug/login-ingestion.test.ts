import nock from 'nock';
import request from 'supertest';
import { testApp, testConfig, testDeps } from '../../support/app';
import { useNock } from '../../support/nock';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.payload.signature-abcd';
const INTERNAL = 'internal-key-for-tests';

const opened: Array<ReturnType<typeof testDeps>> = [];

function app(overrides: Record<string, unknown> = {}) {
  const config = testConfig({
    user_collector: { base_url: 'https://collector.example.test', internal_token: 'collector-token-1' },
    security: { internal_key: INTERNAL },
    ...overrides,
  });
  const deps = testDeps(config);
  opened.push(deps);
  return { deps, server: testApp(deps).callback() };
}

const call = (server: ReturnType<typeof app>['server'], body: unknown) =>
  request(server)
    .post('/?action=login-ingestion-user-collector')
    .set('x-internal-key', INTERNAL)
    .send(body as object);

describe('login-ingestion-user-collector', () => {
  useNock();
  afterEach(async () => {
    for (const deps of opened.splice(0)) await deps.close();
  });

  const collector = (token = TOKEN) =>
    nock('https://collector.example.test', { reqheaders: { 'x-internal-token': 'collector-token-1' } })
      .post('/ingest/login', { uid: 'uid-1', accessToken: token })
      .reply(202, { accepted: true });

  it('forwards uid and accessToken and answers the payload with the token masked', async () => {
    const scope = collector();
    const { server } = app();
    const res = await call(server, { uid: 'uid-1', accessToken: TOKEN });
    expect(scope.isDone()).toBe(true);
    expect(res.body).toMatchObject({
      success: true,
      error: null,
      data: {
        forwarded: true,
        token_source: 'body',
        collector: { url: 'https://collector.example.test/ingest/login', status: 202 },
      },
      payload: { uid: 'uid-1', accessToken: '***' },
    });
    expect(typeof res.body.data.collector.duration_ms).toBe('number');
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  });

  it('takes the token from access_token', async () => {
    const scope = collector();
    const res = await call(app().server, { uid: 'uid-1', access_token: TOKEN });
    expect(scope.isDone()).toBe(true);
    expect(res.body.data.token_source).toBe('body');
  });

  it('takes the token from the __utp cookie', async () => {
    const scope = collector();
    const res = await call(app().server, { uid: 'uid-1' }).set('Cookie', `__utp=${TOKEN}`);
    expect(scope.isDone()).toBe(true);
    expect(res.body).toMatchObject({
      success: true,
      data: { token_source: 'cookie' },
      payload: { accessToken: '***' },
    });
  });

  it('takes the token from a Bearer header', async () => {
    const scope = collector();
    const res = await call(app().server, { uid: 'uid-1' }).set('Authorization', `Bearer ${TOKEN}`);
    expect(scope.isDone()).toBe(true);
    expect(res.body).toMatchObject({ success: true, data: { token_source: 'bearer' } });
  });

  it('refuses a request without any token (token_required)', async () => {
    const res = await call(app().server, { uid: 'uid-1' });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'token_required' } });
  });

  it('answers the collector’s failure, token still masked', async () => {
    nock('https://collector.example.test').post('/ingest/login').reply(503, 'down');
    const res = await call(app().server, { uid: 'uid-1', accessToken: TOKEN });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'upstream_error', forwarded: false, collector: { status: 503 } },
      payload: { accessToken: '***' },
    });
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  });

  it('says when no collector is configured', async () => {
    const res = await call(app({ user_collector: { base_url: '' } }).server, { uid: 'uid-1', accessToken: TOKEN });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'not_configured', forwarded: false } });
  });

  it('is refused without debug or the internal key', async () => {
    const res = await request(app().server)
      .post('/?action=login-ingestion-user-collector')
      .send({ uid: 'uid-1', accessToken: TOKEN });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
  });
});
