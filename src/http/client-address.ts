import { isIP } from 'node:net';
import parseForwarded from 'forwarded-parse';
import type { Config } from '../core/config/schema';
import type { Logger } from '../core/logger';

/*
 * The client's address behind `server.trust_proxy_hops` proxies. Each proxy (nginx's
 * `$proxy_add_x_forwarded_for`, cloud load balancers, ingresses) appends the address it saw to
 * the forwarded header: what stands left of the entries our proxies wrote is whatever the
 * client sent. So the client is the entry that many hops from the right, and nothing further
 * left is ever read. A header with fewer entries than hops (a request that went round a
 * proxy), or an entry there that is no address, leaves the connection's own address: a
 * request is never counted on an address the client could choose.
 *
 * Which header is read is configuration (`server.forwarded_header`), never what the request
 * carries: with proxies that append to X-Forwarded-For only, a client-sent `Forwarded` would
 * otherwise name its client again.
 */

export type ForwardedHeader = Config['server']['forwarded_header'];

// An IPv4 with a port (Azure's X-Forwarded-For), an IPv6 in brackets with or without one (RFC 7239's quoted `for`);
// the port may be an obfuscated `_token` (RFC 7239, 6.3).
const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([^\]]+)\])(?::(?:\d{1,5}|_[\w.-]+))?$/;

/** The IP of one forwarded node: a bare IP, an IPv4 with a port, a bracketed IPv6; anything else (`unknown`, `_hidden`, garbage) is none. */
function nodeAddress(node: string): string | undefined {
  const value = node.trim();
  if (isIP(value) !== 0) return value;
  const match = WITH_PORT.exec(value);
  if (match?.[1] !== undefined) return isIP(match[1]) === 4 ? match[1] : undefined;
  if (match?.[2] !== undefined) return isIP(match[2]) === 6 ? match[2] : undefined;
  return undefined;
}

/**
 * The `for` of one RFC 7239 element (`for=192.0.2.60;proto=https`, `for="[2001:db8::17]:4711"`).
 * Parsed alone: a client's malformed text further left cannot make our proxies' entries unreadable.
 */
function forwardedFor(element: string): string | undefined {
  try {
    const [pairs] = parseForwarded(element.trim());
    return pairs?.for;
  } catch {
    // Malformed: no node.
  }
  return undefined;
}

/**
 * The client's address: the `hops`-th entry from the right of the forwarded header, else the
 * connection's address. Entries are split at commas, which no proxy-written entry contains
 * (a quoted comma can only be in the client's part, left of them).
 */
export function clientAddress(
  header: string | undefined,
  kind: ForwardedHeader,
  hops: number,
  socketAddress: string,
): string {
  if (!header) return socketAddress;
  // Stryker disable next-line ConditionalExpression: with 0 hops the entry read would be the one past the last (none), which answers the connection too; said here outright.
  if (hops === 0) return socketAddress;
  const entries = header.split(',');
  // Stryker disable next-line ConditionalExpression: an entry before the first is none, which answers the connection too; said here outright.
  if (entries.length < hops) return socketAddress;
  const entry = entries[entries.length - hops]!;
  const node = kind === 'forwarded' ? forwardedFor(entry) : entry;
  return (node !== undefined && nodeAddress(node)) || socketAddress;
}

/** `server.trust_proxy` (a boolean that took the first entry) still read for one release: say what to set instead. */
export function warnWhenTrustProxyDeprecated(server: Config['server'], log: Logger): void {
  if (server.trust_proxy === undefined) return;
  const meaning = server.trust_proxy ? ' (the client is the last X-Forwarded-For entry, no longer the first)' : '';
  log.warn(
    { trust_proxy: server.trust_proxy, trust_proxy_hops: server.trust_proxy_hops },
    `server.trust_proxy is deprecated and will be removed: it is read as server.trust_proxy_hops: ${server.trust_proxy_hops}${meaning}; set server.trust_proxy_hops to the number of proxies that append to the forwarded header and remove server.trust_proxy`,
  );
}
