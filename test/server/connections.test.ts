import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import request from 'supertest';
import { capConnectionsPerClient } from '../../src/http/connections';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * A client that never finishes its request is cut after server.request_timeout_seconds, and one
 * client address holds at most server.max_connections_per_client connections at once (not
 * applied behind a trusted proxy, whose connections all come from one address).
 */

const start = (server: Record<string, unknown>) =>
  startService(testConfig({ sandbox: { enabled: false }, server: { host: '127.0.0.1', port: 0, ...server } }));

/** A raw connection to the service, resolving once connected; `ended` resolves with what the server wrote before closing it. */
function open(service: Service): Promise<{ socket: Socket; ended: Promise<string> }> {
  const { port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const ended = new Promise<string>((done) => socket.on('close', () => done(received)));
    socket.once('error', () => {});
    socket.once('connect', () => resolve({ socket, ended }));
    socket.once('error', reject);
  });
}

describe('connections', () => {
  let service: Service | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await service?.close();
    service = undefined;
  });

  it('closes a request whose body never finishes after request_timeout_seconds, answering 408', async () => {
    service = await start({ headers_timeout_seconds: 1, request_timeout_seconds: 2 });
    const { socket, ended } = await open(service);
    sockets.push(socket);
    socket.write(
      'POST /?action=otp_generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"uid":',
    );

    const answer = await ended;

    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes the connections of one client beyond max_connections_per_client, and takes new ones when the first close', async () => {
    service = await start({ max_connections_per_client: 2 });
    const first = await open(service);
    const second = await open(service);
    sockets.push(first.socket, second.socket);

    const third = await open(service);
    sockets.push(third.socket);
    expect(await third.ended).toBe('');

    first.socket.destroy();
    await first.ended;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await request(service.url).get('/healthz')).status).toBe(200);
  });

  it('does not cap per client behind a trusted proxy, where every connection is the proxy', async () => {
    service = await start({ max_connections_per_client: 1, trust_proxy_hops: 1 });
    const held = await open(service);
    sockets.push(held.socket);

    expect((await request(service.url).get('/healthz')).status).toBe(200);
  });
});

/*
 * An IPv6 client holds its whole /64: one opening connections from fresh addresses of its
 * network is one client. Driven on the cap itself with stand-in sockets, since loopback offers
 * one IPv6 address.
 */
describe('the connection cap for IPv6 clients', () => {
  class StandInSocket extends EventEmitter {
    destroyed = false;
    constructor(readonly remoteAddress: string) {
      super();
    }
    destroy() {
      this.destroyed = true;
      this.emit('close');
    }
  }

  it('counts the connections of one /64 together, and another /64 on its own', () => {
    const server = new EventEmitter();
    capConnectionsPerClient(server as unknown as Server, 2, pino({ level: 'silent' }));
    const arrive = (address: string) => {
      const socket = new StandInSocket(address);
      server.emit('connection', socket);
      return socket;
    };

    const held = [arrive('2001:db8:5:6::1'), arrive('2001:db8:5:6::2')];
    expect(arrive('2001:db8:5:6:ffff::3').destroyed).toBe(true);
    expect(arrive('2001:db8:5:7::1').destroyed).toBe(false);

    held[0]!.destroy();
    expect(arrive('2001:db8:5:6::4').destroyed).toBe(false);
  });
});
