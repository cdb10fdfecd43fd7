import { freePort } from '../support/ports';
import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { createUpstream, type UpstreamCall } from '../../src/clients/http';
import { useNock } from '../support/nock';

/* The shared upstream HTTP base on its own: query building, bodies, and how failures are named. */

// A generous limit: the first call of a loaded 2-core run may take long to start. The timeout test sets its own.
// Calls are told to `observe`: each test reads the ones made since it began.
const observed: UpstreamCall[] = [];
const upstream = createUpstream({
  name: 'test',
  label: 'di prova',
  timeoutMs: 10_000,
  log: pino({ level: 'silent' }),
  observe: (call) => observed.push(call),
});

describe('createUpstream', () => {
  let calls: UpstreamCall[];

  useNock();
  beforeEach(() => {
    calls = [];
    observed.length = 0;
    calls = observed;
  });

  it('sends a form body with its length and answers the parsed JSON reply', async () => {
    const scope = nock('https://u.test')
      .post('/form', 'uid=42&name=Mario+Rossi')
      .matchHeader('content-type', 'application/x-www-form-urlencoded')
      .matchHeader('content-length', '23')
      .reply(200, { ok: true });
    const response = await upstream.call(testCtx, {
      endpoint: 'form',
      method: 'POST',
      url: 'https://u.test/form',
      form: { uid: 42, name: 'Mario Rossi', none: undefined },
    });
    expect(response).toMatchObject({ status: 200, data: { ok: true } });
    expect(scope.isDone()).toBe(true);
  });

  it('names a refused connection unreachable and answers upstream_error', async () => {
    const port = await freePort();
    const err = await upstream
      .call(testCtx, { endpoint: 'down', method: 'GET', url: `http://127.0.0.1:${port}/` })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'upstream_error', data: { upstream: 'test', endpoint: 'down' } });
    expect(calls).toMatchObject([{ endpoint: 'down', status: 0, outcome: 'unreachable' }]);
  });

  it('names a reply that does not come in time a timeout', async () => {
    nock('https://u.test').get('/slow').delay(1500).reply(200, {});
    const err = await upstream
      .call(testCtx, { endpoint: 'slow', method: 'GET', url: 'https://u.test/slow', timeoutMs: 500 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'upstream_error' });
    expect(calls).toMatchObject([{ endpoint: 'slow', status: 0, outcome: 'timeout' }]);
  });
});
