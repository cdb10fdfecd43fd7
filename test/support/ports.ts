import { connect, createServer } from 'node:net';

/** A loopback port free a moment ago: nothing listens on it unless a test starts something there. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

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
 * between. A port found free is free only a moment: the other Jest workers and the sandbox's own
 * upstreams bind and connect meanwhile, so a start on it can meet EADDRINUSE. Any other failure,
 * or the last attempt's, is thrown.
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
