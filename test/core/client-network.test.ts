import fc from 'fast-check';
import { clientNetwork } from '../../src/core/client-network';

/*
 * What a per-client limit counts (src/core/client-network.ts): an IPv4 address as it is, an
 * IPv6 address as its /64 whatever its spelling, an IPv4-mapped IPv6 address as its IPv4.
 */

const hextet = fc.integer({ min: 0, max: 0xffff });
const hextets = (n: number) => fc.array(hextet, { minLength: n, maxLength: n });
const spelled = (parts: number[]) => parts.map((part) => part.toString(16)).join(':');

describe('clientNetwork', () => {
  it('keeps an IPv4 address and names an IPv4-mapped one by its IPv4', () => {
    expect(clientNetwork('198.51.100.7')).toBe('198.51.100.7');
    expect(clientNetwork('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(clientNetwork('::FFFF:c633:6407')).toBe('198.51.100.7');
  });

  it('names an IPv6 address by its /64 in one spelling', () => {
    expect(clientNetwork('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80::/64');
  });

  it('returns text that is no address as it is', () => {
    expect(clientNetwork('')).toBe('');
    expect(clientNetwork('unknown')).toBe('unknown');
  });

  it('names every spelling Node takes for IPv6 (embedded IPv4, zones, compressions) without throwing', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.constantFrom('', '%eth0', '%1'), (address, zone) => {
        const subject = clientNetwork(`${address}${zone}`);
        expect(subject).toMatch(/\/64$|^\d+\.\d+\.\d+\.\d+$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives two addresses one subject exactly when their first 64 bits agree', () => {
    fc.assert(
      fc.property(hextets(4), hextets(4), hextets(4), hextets(4), (prefixA, hostA, prefixB, hostB) => {
        fc.pre(!(prefixA[0] === 0 && prefixA[1] === 0 && prefixA[2] === 0 && prefixA[3] === 0));
        const a = clientNetwork(spelled([...prefixA, ...hostA]));
        expect(clientNetwork(spelled([...prefixA, ...hostB]))).toBe(a);
        const samePrefix = prefixA.every((part, i) => part === prefixB[i]);
        expect(clientNetwork(spelled([...prefixB, ...hostB])) === a).toBe(samePrefix);
      }),
    );
  });
});
