import fc from 'fast-check';
import { clientNetwork, clientNetworks } from '../../src/core/client-network';

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

describe('clientNetworks', () => {
  it("nests an IPv6 client's /64 in its /56 and its /48, and an IPv4 client in its /24", () => {
    expect(clientNetworks('2001:db8:1:2ab::9')).toEqual([
      { tier: 'client', subject: '2001:db8:1:2ab::/64' },
      { tier: '56', subject: '2001:db8:1:200::/56' },
      { tier: '48', subject: '2001:db8:1::/48' },
    ]);
    expect(clientNetworks('::ffff:198.51.100.7')).toEqual([
      { tier: 'client', subject: '198.51.100.7' },
      { tier: '24', subject: '198.51.100.0/24' },
    ]);
    expect(clientNetworks('unknown')).toEqual([{ tier: 'client', subject: 'unknown' }]);
  });

  it('names two addresses by one network exactly when they share its prefix (property)', () => {
    fc.assert(
      fc.property(hextets(8), hextets(8), fc.integer({ min: 0, max: 7 }), (a, b, shared) => {
        // b shares a's first `shared` hextets, then is whatever it is.
        const other = [...a.slice(0, shared), ...b.slice(shared)];
        const [mine, theirs] = [clientNetworks(spelled(a)), clientNetworks(spelled(other))];
        const bitsShared = (bits: number) =>
          a.slice(0, bits / 16).every((h, i) => h === other[i]) &&
          (bits % 16 === 0 ||
            a[Math.floor(bits / 16)]! >> (16 - (bits % 16)) === other[Math.floor(bits / 16)]! >> (16 - (bits % 16)));
        return [64, 56, 48].every((bits, i) => (mine[i]!.subject === theirs[i]!.subject) === bitsShared(bits));
      }),
    );
  });
});
