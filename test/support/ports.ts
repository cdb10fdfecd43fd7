import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * The ports the kernel hands out on its own (a listen on port 0, the local end of every outgoing
 * connection): Linux's ip_local_port_range, else its default.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low! > 0 && high! >= low!) return [low!, high!];
  } catch {
    // Not Linux: its default range.
  }
  return [32768, 60999];
}

/** Where freePort looks: the widest stretch of 1024-65535 outside the ephemeral range. */
const PICKED_FROM: [number, number] = (() => {
  const [low, high] = ephemeralRange();
  return low - 1024 >= 65535 - high ? [1024, low - 1] : [high + 1, 65535];
})();

const listensOn = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/**
 * A loopback port free a moment ago: nothing listens on it unless a test starts something there.
 * Chosen at random outside the ephemeral range, so that what binds or connects meanwhile (the
 * other Jest workers, the sandbox's own upstreams, a child process's connections) cannot be given
 * it by the kernel; only another test choosing the same port could take it (onFreePort, below).
 */
export async function freePort(): Promise<number> {
  const [from, to] = PICKED_FROM;
  for (;;) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (await listensOn(port)) return port;
  }
}

/** What connecting to a loopback port gives: `connected`, or the error code (`ECONNREFUSED`). */
export const connectOutcome = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });

/**
 * Starts something on a port chosen before it binds, choosing again when the port was taken in
 * between (by another test that chose it too). Any other failure, or the last attempt's, is thrown.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === attempts) throw err;
    }
  }
}
