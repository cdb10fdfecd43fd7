import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync, brotliCompressSync, deflateSync } from 'node:zlib';
import pino from 'pino';
import { createUpstream } from '../../src/clients/http';
import { testCtx } from '../support/context';

/*
 * The upstream client's transport (src/clients/http-adapter.ts) reads replies as axios's own
 * adapter does: it advertises gzip, deflate and brotli, so it must decode them; a byte-order
 * mark is dropped; the status reaches the client whatever it is.
 */

let server: Server;
let base: string;
const replies = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const reply = replies.get(req.url!)!;
    req.resume();
    req.on('end', () => {
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

const upstream = createUpstream({
  name: 'adapter',
  label: 'di prova',
  timeoutMs: 10_000,
  log: pino({ level: 'silent' }),
});
const json = Buffer.from('{"uid":"u1","name":"Mario Rossi"}');

describe('the upstream client reading replies', () => {
  it.each([
    ['gzip', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['br', brotliCompressSync(json)],
  ])('decodes a %s reply', async (encoding, body) => {
    replies.set(`/${encoding}`, {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
      body,
    });
    const reply = await upstream.call(testCtx, { endpoint: 'enc', method: 'GET', url: `${base}/${encoding}` });
    expect(reply.data).toEqual({ uid: 'u1', name: 'Mario Rossi' });
  });

  it('drops a byte-order mark before parsing', async () => {
    replies.set('/bom', {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]),
    });
    expect((await upstream.call(testCtx, { endpoint: 'bom', method: 'GET', url: `${base}/bom` })).data).toEqual({
      uid: 'u1',
      name: 'Mario Rossi',
    });
  });

  it('hands an accepted non-2xx status to the client', async () => {
    replies.set('/missing', {
      status: 404,
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.from('{"error":"no such user"}'),
    });
    const reply = await upstream.call(testCtx, {
      endpoint: 'get',
      method: 'GET',
      url: `${base}/missing`,
      acceptStatus: [404],
    });
    expect(reply).toMatchObject({ status: 404, data: { error: 'no such user' } });
  });
});
