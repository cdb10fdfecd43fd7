import pino from 'pino';
import request from 'supertest';
import { clientAddress, warnWhenTrustProxyDeprecated } from '../../src/http/client-address';
import { startService } from '../../src/service';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * The client behind `server.trust_proxy_hops` appending proxies: the entry that many from the
 * right, never one the client wrote, and the connection's address whenever the header cannot
 * say (too short, not an address there).
 */

const SOCKET = '192.0.2.1';
const xff = (header: string | undefined, hops: number) => clientAddress(header, 'x-forwarded-for', hops, SOCKET);
const fwd = (header: string | undefined, hops: number) => clientAddress(header, 'forwarded', hops, SOCKET);

describe('the client address from X-Forwarded-For', () => {
  it('is the connection with 0 hops, whatever the header says', () => {
    expect(xff('203.0.113.5', 0)).toBe(SOCKET);
    expect(xff('10.9.1.7, 203.0.113.5', 0)).toBe(SOCKET);
  });

  it('is the last entry with 1 hop: the one the proxy appended, not the first the client wrote', () => {
    expect(xff('203.0.113.5', 1)).toBe('203.0.113.5');
    expect(xff('10.9.1.7, 198.51.100.7', 1)).toBe('198.51.100.7');
    expect(xff('10.9.2.7,10.9.3.7,  198.51.100.7 ', 1)).toBe('198.51.100.7');
  });

  it('is the second from the right with 2 hops (a CDN in front of a load balancer)', () => {
    expect(xff('198.51.100.7, 203.0.113.9', 2)).toBe('198.51.100.7');
    expect(xff('10.9.1.7, 1.2.3.4, 198.51.100.7, 203.0.113.9', 2)).toBe('198.51.100.7');
  });

  it('is the connection when the header has fewer entries than hops, never its leftmost entry', () => {
    expect(xff('10.9.1.7', 2)).toBe(SOCKET);
    expect(xff('10.9.1.7, 198.51.100.7', 3)).toBe(SOCKET);
    expect(xff(undefined, 1)).toBe(SOCKET);
    expect(xff('', 1)).toBe(SOCKET);
  });

  it('is the connection when the entry at the hop is no IP address', () => {
    for (const garbage of [
      'unknown',
      'evil.example',
      '999.1.1.1',
      '1.2.3',
      '"1.2.3.4"',
      'for=1.2.3.4',
      '<script>',
      '',
    ]) {
      expect(xff(`203.0.113.5, ${garbage}`, 1)).toBe(SOCKET);
    }
    expect(xff('203.0.113.5,', 1)).toBe(SOCKET);
  });

  it('takes IPv6 as is, and drops a port or brackets some proxies add', () => {
    expect(xff('10.9.1.7, 2001:db8::17', 1)).toBe('2001:db8::17');
    expect(xff('10.9.1.7, 198.51.100.7:51234', 1)).toBe('198.51.100.7');
    expect(xff('10.9.1.7, [2001:db8::17]:4711', 1)).toBe('2001:db8::17');
    expect(xff('10.9.1.7, [2001:db8::17]', 1)).toBe('2001:db8::17');
    expect(xff('10.9.1.7, [198.51.100.7]', 1)).toBe(SOCKET);
  });

  it('is the connection when the entry holds more than an address and its port', () => {
    for (const entry of [
      '198.51.100.7:51234x',
      '198.51.100.7:80 203.0.113.5',
      '[2001:db8::17]:4711/evil',
      '[2001:db8::17]:_port!',
    ])
      expect([entry, xff(`10.9.1.7, ${entry}`, 1)]).toEqual([entry, SOCKET]);
  });
});

describe('the client address from Forwarded (RFC 7239)', () => {
  it('is the `for` of the element that many hops from the right', () => {
    expect(fwd('for=203.0.113.5', 1)).toBe('203.0.113.5');
    expect(fwd('for=10.9.1.7, for=198.51.100.7;proto=https;by=203.0.113.43', 1)).toBe('198.51.100.7');
    expect(fwd('for=10.9.1.7, for=198.51.100.7, for=203.0.113.9', 2)).toBe('198.51.100.7');
    expect(fwd('for=10.9.1.7;proto=http, FOR=198.51.100.7', 1)).toBe('198.51.100.7');
  });

  it('reads quoted IPv6 with brackets and ports, and quoted IPv4', () => {
    expect(fwd('for="[2001:db8:cafe::17]:4711"', 1)).toBe('2001:db8:cafe::17');
    expect(fwd('for=10.9.1.7, for="[2001:db8:cafe::17]"', 1)).toBe('2001:db8:cafe::17');
    expect(fwd('for="198.51.100.7:47011"', 1)).toBe('198.51.100.7');
    expect(fwd('for="198.51.100.7"', 1)).toBe('198.51.100.7');
    expect(fwd('for="[2001:db8::17]:_hidden-port"', 1)).toBe('2001:db8::17');
  });

  it('is the connection for an unknown or obfuscated node, an element without `for`, or a malformed element', () => {
    expect(fwd('for=unknown', 1)).toBe(SOCKET);
    expect(fwd('for=_hidden', 1)).toBe(SOCKET);
    expect(fwd('proto=https;by=203.0.113.43', 1)).toBe(SOCKET);
    expect(fwd('for=[2001:db8::17]', 1)).toBe(SOCKET);
    expect(fwd('for="198.51.100.7', 1)).toBe(SOCKET);
    expect(fwd('198.51.100.7', 1)).toBe(SOCKET);
  });

  it("reads the proxies' element even when the client's text left of it is malformed", () => {
    expect(fwd('for="10.9.1.7, for=198.51.100.7', 1)).toBe('198.51.100.7');
    expect(fwd('garbage;;=, for=198.51.100.7', 1)).toBe('198.51.100.7');
  });

  it('is the connection when the header has fewer elements than hops', () => {
    expect(fwd('for=10.9.1.7', 2)).toBe(SOCKET);
    expect(fwd(undefined, 1)).toBe(SOCKET);
  });
});

describe('ctx.ip of the app', () => {
  const ipOf = async (server: Record<string, unknown>, headers: Record<string, string>) => {
    const deps = testDeps(testConfig({ server }));
    const app = testApp(deps, { routes: (router) => router.get('/ip', (ctx) => void (ctx.body = { ip: ctx.ip })) });
    const answer = await request(app.callback()).get('/ip').set(headers);
    await deps.close();
    return (answer.body as { ip: string }).ip;
  };
  const SELF = /^(::ffff:)?127\.0\.0\.1$|^::1$/;

  it("is the connection's address by default, whatever the forwarded headers say", async () => {
    expect(await ipOf({}, { 'X-Forwarded-For': '10.9.1.7, 198.51.100.7', Forwarded: 'for=203.0.113.5' })).toMatch(SELF);
  });

  it('is the last X-Forwarded-For entry with one hop, and ignores a Forwarded header the client sends', async () => {
    expect(
      await ipOf(
        { trust_proxy_hops: 1 },
        { 'X-Forwarded-For': '10.9.1.7, 198.51.100.7', Forwarded: 'for=203.0.113.5' },
      ),
    ).toBe('198.51.100.7');
    expect(await ipOf({ trust_proxy_hops: 1 }, { Forwarded: 'for=203.0.113.5' })).toMatch(SELF);
  });

  it('is the Forwarded `for` with server.forwarded_header: forwarded, and ignores X-Forwarded-For then', async () => {
    const server = { trust_proxy_hops: 1, forwarded_header: 'forwarded' };
    expect(
      await ipOf(server, { 'X-Forwarded-For': '10.9.1.7', Forwarded: 'for=10.9.2.7, for="[2001:db8::17]:4711"' }),
    ).toBe('2001:db8::17');
    expect(await ipOf(server, { 'X-Forwarded-For': '10.9.1.7' })).toMatch(SELF);
  });

  it('is the last entry, not the first, with the deprecated server.trust_proxy: true', async () => {
    expect(await ipOf({ trust_proxy: true }, { 'X-Forwarded-For': '10.9.1.7, 198.51.100.7' })).toBe('198.51.100.7');
  });

  it('is the connection with two hops and a header of one entry', async () => {
    expect(await ipOf({ trust_proxy_hops: 2 }, { 'X-Forwarded-For': '10.9.1.7' })).toMatch(SELF);
  });
});

describe('the deprecated server.trust_proxy', () => {
  it('reads true as one hop and false as none', () => {
    expect(testConfig({ server: { trust_proxy: true } }).server.trust_proxy_hops).toBe(1);
    expect(testConfig({ server: { trust_proxy: false } }).server.trust_proxy_hops).toBe(0);
    expect(testConfig({ server: { trust_proxy: true, trust_proxy_hops: 1 } }).server.trust_proxy_hops).toBe(1);
    expect(testConfig().server.trust_proxy_hops).toBe(0);
  });

  it('refuses to start when it disagrees with server.trust_proxy_hops, in one line naming both', () => {
    expect(() => testConfig({ server: { trust_proxy: true, trust_proxy_hops: 2 } })).toThrow(
      'server.trust_proxy: true means server.trust_proxy_hops: 1, but server.trust_proxy_hops is 2: remove the deprecated server.trust_proxy',
    );
    expect(() => testConfig({ server: { trust_proxy: false, trust_proxy_hops: 1 } })).toThrow(
      /server\.trust_proxy: false means server\.trust_proxy_hops: 0/,
    );
  });

  const logged = () => {
    const lines: Array<{ level: number; msg: string }> = [];
    return {
      lines,
      log: pino(
        { level: 'info' },
        { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) },
      ),
    };
  };
  const deprecation =
    /^server\.trust_proxy is deprecated .*server\.trust_proxy_hops: 1 .*set server\.trust_proxy_hops .*remove server\.trust_proxy$/;

  it('logs one warn line at start naming what to set instead', async () => {
    const { lines, log } = logged();
    const service = await startService(testConfig({ server: { host: '127.0.0.1', port: 0, trust_proxy: true } }), {
      log,
    });
    await service.close();
    const warnings = lines.filter((line) => line.level === 40 && deprecation.test(line.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ trust_proxy: true, trust_proxy_hops: 1 });
  });

  it('logs one warn line for server.trust_proxy: false too, read as no hops', () => {
    const { lines, log } = logged();
    warnWhenTrustProxyDeprecated(testConfig({ server: { trust_proxy: false } }).server, log);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        trust_proxy: false,
        trust_proxy_hops: 0,
        msg: 'server.trust_proxy is deprecated and will be removed: it is read as server.trust_proxy_hops: 0; set server.trust_proxy_hops to the number of proxies that append to the forwarded header and remove server.trust_proxy',
      }),
    ]);
  });

  it('logs nothing when only server.trust_proxy_hops is set', () => {
    const { lines, log } = logged();
    warnWhenTrustProxyDeprecated(testConfig({ server: { trust_proxy_hops: 1 } }).server, log);
    warnWhenTrustProxyDeprecated(testConfig().server, log);
    expect(lines).toEqual([]);
  });
});
