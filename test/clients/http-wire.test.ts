import axios from 'axios';
import http, { createServer, type IncomingMessage, type Server } from 'node:http';
import { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createUpstream } from '../../src/clients/http';
import { testCtx } from '../support/context';

/*
 * What the upstream client puts on the wire, byte for byte, read by a real server on loopback
 * (no nock: it replaces node:http's request). The speed work configures axios differently
 * (docs/decisions.md "Speed work"); the upstreams must not see any of it.
 */

interface Seen {
  method: string;
  url: string;
  headers: string[];
  body: string;
}

let server: Server;
let base: string;
let host: string;
let connections = 0;
const seen: Seen[] = [];

beforeAll(async () => {
  // nock, when a file before this one in the worker imported it, must be gone (test/support/node-environment.js).
  expect(http.ClientRequest.name).toBe('ClientRequest');
  server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `http://${host}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
beforeEach(() => {
  seen.length = 0;
  connections = 0;
});

const upstream = () =>
  createUpstream({ name: 'wire', label: 'di prova', timeoutMs: 10_000, log: pino({ level: 'silent' }) });
const userAgent = ['User-Agent', `axios/${axios.VERSION}`];
const encodings = ['Accept-Encoding', 'gzip, compress, deflate, br'];

describe('the upstream client on the wire', () => {
  it('sends a GET with its query, and only Accept, the user agent, the encodings, Host and Connection', async () => {
    const reply = await upstream().call(testCtx, {
      endpoint: 'get',
      method: 'GET',
      url: `${base}/user`,
      params: { uid: 'a b', none: undefined, n: 3 },
    });
    expect(reply.data).toEqual({ ok: true });
    expect(seen).toEqual([
      {
        method: 'GET',
        url: '/user?uid=a+b&n=3',
        headers: ['Accept', 'application/json', ...userAgent, ...encodings, 'Host', host, 'Connection', 'keep-alive'],
        body: '',
      },
    ]);
  });

  it("sends a JSON body once serialised, with its type, its length and the caller's headers", async () => {
    await upstream().call(testCtx, {
      endpoint: 'post',
      method: 'POST',
      url: `${base}/ingest`,
      json: { uid: 'u1', at: 1 },
      headers: { Authorization: 'Bearer t' },
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/ingest',
        headers: [
          'Accept',
          'application/json',
          'Content-Type',
          'application/json',
          'Authorization',
          'Bearer t',
          ...userAgent,
          'Content-Length',
          '19',
          ...encodings,
          'Host',
          host,
          'Connection',
          'keep-alive',
        ],
        body: '{"uid":"u1","at":1}',
      },
    ]);
  });

  it('sends a form body urlencoded, with its type and length', async () => {
    await upstream().call(testCtx, {
      endpoint: 'form',
      method: 'POST',
      url: `${base}/search`,
      form: { q: 'x y', skip: undefined },
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/search',
        headers: [
          'Accept',
          'application/json',
          'Content-Type',
          'application/x-www-form-urlencoded',
          ...userAgent,
          'Content-Length',
          '5',
          ...encodings,
          'Host',
          host,
          'Connection',
          'keep-alive',
        ],
        body: 'q=x+y',
      },
    ]);
  });

  it('keeps one connection alive across calls, and never changes its TCP keep-alive once set', async () => {
    // Node's socket sets TCP keep-alive (several setsockopt calls) only when the delay asked for
    // differs from the last one: two different delays, one per call, cost those calls every time.
    const asked: Array<Parameters<Socket['setKeepAlive']>> = [];
    const original = Socket.prototype.setKeepAlive;
    const spy = jest.spyOn(Socket.prototype, 'setKeepAlive').mockImplementation(function (this: Socket, ...args) {
      asked.push(args);
      return original.apply(this, args);
    });
    try {
      const client = upstream();
      for (let i = 0; i < 3; i++) await client.call(testCtx, { endpoint: 'get', method: 'GET', url: `${base}/user` });
    } finally {
      spy.mockRestore();
    }
    expect(connections).toBe(1);
    expect(seen).toHaveLength(3);
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked.map(([enable, delay]: Parameters<Socket['setKeepAlive']>) => `${enable}/${delay}`)).size).toBe(
      1,
    );
  });
});

describe('the upstream client behind a proxy', () => {
  const saved = {
    http_proxy: process.env.http_proxy,
    HTTP_PROXY: process.env.HTTP_PROXY,
    no_proxy: process.env.no_proxy,
    NO_PROXY: process.env.NO_PROXY,
  };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('sends its calls through the proxy the environment names, as operators behind one expect', async () => {
    // The test server plays the proxy: a forward proxy receives the absolute URL.
    process.env.http_proxy = base;
    delete process.env.no_proxy;
    delete process.env.NO_PROXY;
    const reply = await upstream().call(testCtx, {
      endpoint: 'get',
      method: 'GET',
      url: 'http://idp.example.test/user',
      params: { uid: 'u1' },
    });
    expect(reply.data).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'GET', url: 'http://idp.example.test/user?uid=u1' });
    expect(seen[0]!.headers).toEqual(expect.arrayContaining(['host', 'idp.example.test']));
  });
});

describe('idle pooled connections', () => {
  it('closes an idle connection itself within 4 s, before an upstream with the usual 5 s idle timeout would, so no call is written on a socket being closed', async () => {
    const closedBy: string[] = [];
    const upstreamServer = createServer((_req, res) => res.end('{}'));
    // An upstream that keeps idle connections far longer than we do: whoever closes first shows.
    upstreamServer.keepAliveTimeout = 30_000;
    upstreamServer.on('connection', (socket) => socket.on('end', () => closedBy.push('client')));
    await new Promise<void>((resolve) => upstreamServer.listen(0, '127.0.0.1', resolve));
    const { port } = upstreamServer.address() as AddressInfo;
    const idle = createUpstream({ name: 'idle', label: 'di prova', timeoutMs: 10_000, log: pino({ level: 'silent' }) });
    try {
      await idle.call(testCtx, { endpoint: 'one', method: 'GET', url: `http://127.0.0.1:${port}/` });
      await new Promise((resolve) => setTimeout(resolve, 4_600));
      expect(closedBy).toEqual(['client']);
    } finally {
      upstreamServer.closeAllConnections();
      await new Promise((resolve) => upstreamServer.close(resolve));
    }
  }, 15_000);
});
