import nock from 'nock';
import { messageOf } from '../../../src/core/errors';
import { BASE, identityApp, identityConfig, internal, paths, useNock } from './support';

/* Every way the provider can fail answers success false, upstream_error and a sentence a person can read, promptly. */

const uid = 'PNIa7Xk2mR0ssi';
const readable = messageOf('upstream_error', { service: 'di identità' });

describe('identity provider failures', () => {
  useNock();

  it('answers upstream_error on a non-2xx status', async () => {
    const { call } = identityApp();
    const scope = nock(BASE).post(paths.userGet).reply(502, '<html>Bad gateway</html>');
    const res = await call('get_user', { uid }, internal);
    expect(scope.isDone()).toBe(true);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: false,
      error: readable,
      data: { reason: 'upstream_error', upstream: 'identity', endpoint: 'user_get', upstream_status: 502 },
    });
  });

  it('answers upstream_error on a reply that is not JSON', async () => {
    const { call } = identityApp();
    nock(BASE).post(paths.userGet).reply(200, '{"code":0,"user":', { 'Content-Type': 'application/json' });
    const res = await call('get_user', { uid }, internal);
    expect(res.body).toMatchObject({
      success: false,
      error: readable,
      data: { reason: 'upstream_error', endpoint: 'user_get' },
    });
  });

  it('answers upstream_error after identity.timeout_seconds when the provider does not answer', async () => {
    // A 1 s limit for this test only: the shared one is generous so a loaded CI machine never trips it.
    const { call } = identityApp(identityConfig({ identity: { timeout_seconds: 1 } }));
    nock(BASE).post(paths.userGet).delay(3000).reply(200, {});
    const started = Date.now();
    const res = await call('get_user', { uid }, internal);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(res.body).toMatchObject({
      success: false,
      error: readable,
      data: { reason: 'upstream_error', endpoint: 'user_get' },
    });
  });

  it('answers upstream_error when the connection is refused', async () => {
    const { call } = identityApp(identityConfig({ identity: { base_url: 'http://127.0.0.1:1' } }));
    const res = await call('get_user', { uid }, internal);
    expect(res.body).toMatchObject({
      success: false,
      error: readable,
      data: { reason: 'upstream_error', endpoint: 'user_get' },
    });
  });

  it('answers upstream_error when a v3 reply carries a non-zero code under HTTP 200', async () => {
    const { call } = identityApp();
    nock(BASE).post(paths.userGet).reply(200, { code: 500, message: 'Internal error' });
    const res = await call('get_user', { uid }, internal);
    expect(res.body).toMatchObject({
      success: false,
      error: readable,
      data: { reason: 'upstream_error', provider_errors: [{ code: 500, message: 'Internal error' }] },
    });
  });
});
