import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientNetwork } from '../core/client-network';
import type { Config } from '../core/config/schema';
import type { Logger } from '../core/logger';

/*
 * How long a connection may hold the service, and how many one client may hold at once. Node's
 * defaults let a client that never finishes its headers or body keep a socket for a minute (and
 * a body for five), and open as many sockets as it likes: a few hundred slow clients then hold
 * the process. A client is its network, as for every per-client limit (an IPv6 client's /64).
 * A proxy in front does this better where there is one (`server.trust_proxy_hops`): every
 * connection then comes from the proxy, so the per-client cap is the proxy's job and is not
 * applied here (docs/operations.md).
 */
export function createHttpServer(listener: RequestListener, settings: Config['server'], log: Logger): Server {
  const server = createServer(
    {
      // Headers are part of the request: Node refuses a headers timeout longer than the request's.
      headersTimeout: Math.min(settings.headers_timeout_seconds, settings.request_timeout_seconds) * 1000,
      requestTimeout: settings.request_timeout_seconds * 1000,
      keepAliveTimeout: settings.keep_alive_timeout_seconds * 1000,
      // Node looks for connections past those timeouts every 30 s by default: a 15 s limit held for 45.
      connectionsCheckingInterval: 1_000,
    },
    listener,
  );
  const cap = settings.trust_proxy_hops > 0 ? 0 : settings.max_connections_per_client;
  if (cap > 0) capConnectionsPerClient(server, cap, log);
  return server;
}

/** Closes a client's connections beyond `cap` on arrival; exported for the IPv6 test, which no loopback can drive. */
export function capConnectionsPerClient(server: Pick<Server, 'on'>, cap: number, log: Logger): void {
  const open = new Map<string, number>();
  let warned = false;
  server.on('connection', (socket: Socket) => {
    const client = clientNetwork(socket.remoteAddress ?? '');
    const count = (open.get(client) ?? 0) + 1;
    if (count > cap) {
      // Refused before a byte is read: no answer, the client sees the connection closed.
      socket.destroy();
      if (!warned)
        log.warn({ cap }, 'a client reached server.max_connections_per_client; further refusals are not logged');
      warned = true;
      return;
    }
    open.set(client, count);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left === 0) open.delete(client);
      else open.set(client, left);
    });
  });
}
