import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { freePort, onFreePort } from './ports';

/*
 * onFreePort chooses again when the port it chose was taken before the start bound it (another
 * worker, the sandbox's own upstreams), and gives up on anything else.
 */

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('freePort', () => {
  it('chooses ports the kernel never hands out on its own, each one free when chosen', async () => {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port < low! || port > high!).toBe(true);
    const server = await listenOn(ports[0]!);
    await close(server);
  });
});

describe('onFreePort', () => {
  it('chooses another port when the chosen one is taken before the start binds it', async () => {
    const tried: number[] = [];
    const server = await onFreePort(async (port) => {
      tried.push(port);
      // The first choice is taken in between, as a parallel worker would take it.
      if (tried.length === 1) {
        const thief = await listenOn(port);
        try {
          return await listenOn(port);
        } finally {
          await close(thief);
        }
      }
      return listenOn(port);
    });
    try {
      expect(tried).toHaveLength(2);
      expect((server.address() as { port: number }).port).toBe(tried[1]);
    } finally {
      await close(server);
    }
  });

  it('throws any other failure at once, and EADDRINUSE after the last attempt', async () => {
    let calls = 0;
    await expect(
      onFreePort(async () => {
        calls++;
        throw Object.assign(new Error('refused'), { code: 'EACCES' });
      }),
    ).rejects.toMatchObject({ code: 'EACCES' });
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      onFreePort(async () => {
        calls++;
        throw Object.assign(new Error('taken'), { code: 'EADDRINUSE' });
      }, 3),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(calls).toBe(3);
  });
});
