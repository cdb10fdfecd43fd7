import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/*
 * What a per-client limit counts: the client's network, not its address. An IPv4 address is
 * one client (a NAT shares it; that is documented in docs/security.md). An IPv6 address is not:
 * every home line, phone and cloud server gets at least a /64 (RFC 6177, RFC 7934) and picks any
 * of its 2^64 addresses at will, so a bot rotating its address within its own /64 would get a
 * fresh budget per request. Its /64 is counted instead, the usual key of IPv6 rate limits. An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket reports for an IPv4
 * client) is its IPv4 address: one client is one subject whichever way it arrived.
 */

const IPV6_CLIENT_PREFIX = 64;

/** The subject a per-client limit counts for this address; text that is no address is returned as it is. */
export function clientNetwork(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const address = ipaddr.IPv6.parse(ip);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${IPV6_CLIENT_PREFIX}`).toString()}/${IPV6_CLIENT_PREFIX}`;
}
