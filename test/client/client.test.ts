import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACTIONS, ClientError, createClient, type Client, type Fetch } from '../../client/src';
import { actions } from '../../src/actions';
import type { Deps } from '../../src/domain/deps';
import { testApp, testDeps } from '../support/app';
import { freePort } from '../support/ports';

/*
 * The typed client's calls: one function per action of the service, each `POST /<name>` with a
 * JSON body, answering the envelope whatever the HTTP status; ClientError only when no envelope
 * came back.
 */

let deps: Deps;
let server: Server;
let client: Client;
let baseUrl: string;

beforeAll(async () => {
  deps = testDeps();
  server = testApp(deps).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createClient({ baseUrl });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await deps.close();
});

describe('the typed client', () => {
  it('has one function for every action the service registers, and no other', () => {
    expect([...ACTIONS].sort()).toEqual(actions.map((a) => a.name).sort());
    for (const name of ACTIONS) expect(typeof client[name]).toBe('function');
  });

  it('posts JSON to /<action> with the headers given, and returns the parsed envelope', async () => {
    const sent: Array<{ url: string; init: Parameters<Fetch>[1] }> = [];
    const recording = createClient({
      baseUrl: 'https://login.example.com/',
      headers: { 'x-internal-key': 'k' },
      fetch: async (url, init) => {
        sent.push({ url, init });
        return {
          status: 200,
          json: async () => ({ success: true, error: null, data: { next_step: 14, flow: 'phone' } }),
        };
      },
    });
    const answer = await recording.FeLogin({ identifier: '+393331234567' }, { headers: { 'x-request-id': 'r1' } });
    expect(answer).toEqual({ success: true, error: null, data: { next_step: 14, flow: 'phone' } });
    expect(sent).toEqual([
      {
        url: 'https://login.example.com/FeLogin',
        init: expect.objectContaining({
          method: 'POST',
          body: '{"identifier":"+393331234567"}',
          credentials: 'same-origin',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'x-internal-key': 'k',
            'x-request-id': 'r1',
          },
        }),
      },
    ]);
  });

  it('returns a refusal as the envelope: a validation failure of the action', async () => {
    const answer = await client.FeLogin({ identifier: '' });
    expect(answer).toMatchObject({
      success: false,
      error: 'Richiesta non valida.',
      data: { reason: 'invalid_request', issues: [expect.objectContaining({ path: 'identifier' })] },
    });
  });

  it('returns a transport-level refusal (another HTTP status, same envelope) instead of throwing', async () => {
    const answer = await client.call('no_such_action' as 'FeLogin', { identifier: 'x' });
    expect(answer).toMatchObject({ success: false, data: { reason: 'unknown_action' } });
  });

  it('throws ClientError when the service is not reached', async () => {
    const closed = createClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    await expect(closed.FeLogin({ identifier: 'a@example.com' })).rejects.toThrow(ClientError);
  });

  it('throws ClientError with the status when the answer is not JSON', async () => {
    const proxy = createClient({ fetch: async () => ({ status: 502, json: async () => JSON.parse('<html>') }) });
    const error = await proxy.FeLogin({ identifier: 'a@example.com' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ status: 502 });
  });
});
