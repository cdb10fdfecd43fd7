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

/** The prefixes a client's budgets nest in, narrowest first: an IPv6 client's /64, /56 and /48; an IPv4 client's address and /24. */
export type NetworkTier = 'client' | '56' | '48' | '24';

/*
 * The wider networks a client's address sits in, each with a budget of its own (the bot
 * challenge's client signals, docs/security.md, "Budgets that nest"). An IPv6 customer is
 * handed a /56 or a /48 (RIPE-690: a /56 for a home, a /48 for a site), so one bot holds
 * 256 or 65,536 /64s and rotating them costs it nothing: the /56 and the /48 are counted too.
 * An IPv4 address is counted in its /24, the block a hosting provider or a carrier's NAT pool
 * is routed in.
 */
export function clientNetworks(ip: string): Array<{ tier: NetworkTier; subject: string }> {
  if (isIP(ip) === 4)
    return [
      { tier: 'client', subject: ip },
      { tier: '24', subject: `${ipaddr.IPv4.networkAddressFromCIDR(`${ip}/24`).toString()}/24` },
    ];
  if (isIP(ip) !== 6) return [{ tier: 'client', subject: ip }];
  const address = ipaddr.IPv6.parse(ip);
  if (address.isIPv4MappedAddress()) return clientNetworks(address.toIPv4Address().toString());
  const prefix = (bits: number) =>
    `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${bits}`).toString()}/${bits}`;
  return [
    { tier: 'client', subject: prefix(IPV6_CLIENT_PREFIX) },
    { tier: '56', subject: prefix(56) },
    { tier: '48', subject: prefix(48) },
  ];
}
