import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MARIO, startSecurityApp, type SecurityApp } from './support';

/*
 * The client behind one appending proxy hop cannot choose its address. Proxies (nginx's
 * `$proxy_add_x_forwarded_for`, cloud load balancers) append the address they saw, so the first
 * X-Forwarded-For entry is the client's own text: rotating it (`10.9.$i.7, 198.51.100.7`) used
 * to give every request a fresh per-IP budget. Wrong codes and account lookups are limited at
 * the same request with a rotating first entry as with a fixed one, with the new key and with
 * the deprecated boolean in its new meaning; then the same through a real appending proxy, the
 * client forging every forwarded header it can.
 */

const phone = (n: number) => `+39333${String(2000000 + n)}`;

/** The 0-based index of the first 429, or -1. */
const firstRefusal = (statuses: number[]) => statuses.indexOf(429);

describe.each([
  ['server.trust_proxy_hops: 1', { trust_proxy_hops: 1 }],
  ['the deprecated server.trust_proxy: true', { trust_proxy: true }],
])('one appending proxy hop (%s)', (_name, server) => {
  let app: SecurityApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('limits wrong codes at verifies_per_ip_per_minute whether the first X-Forwarded-For entry rotates or not', async () => {
    app = await startSecurityApp({ server });
    const limit = app.deps.config.rate_limits.verifies_per_ip_per_minute;
    const wrongCode = (i: number, forwardedFor: string) =>
      app!.post('verify_otp', { email: phone(i), otp_code: '000000' }).set('X-Forwarded-For', forwardedFor);

    const rotating: number[] = [];
    for (let i = 0; i < limit + 15; i++) rotating.push((await wrongCode(i, `10.9.${i}.7, 198.51.100.7`)).status);
    const fixed: number[] = [];
    for (let i = 0; i < limit + 15; i++) fixed.push((await wrongCode(i, '10.9.0.7, 198.51.100.8')).status);

    expect(firstRefusal(rotating)).toBe(limit);
    expect(firstRefusal(fixed)).toBe(limit);
    expect(rotating.filter((status) => status === 429)).toHaveLength(15);
  });

  it('limits lookups without a proof at lookups_per_ip_per_minute whether the first X-Forwarded-For entry rotates or not', async () => {
    app = await startSecurityApp({ server });
    const limit = app.deps.config.rate_limits.lookups_per_ip_per_minute;
    const lookup = (i: number, forwardedFor: string) =>
      app!.post('search_user', { phone: phone(i) }).set('X-Forwarded-For', forwardedFor);

    const rotating: number[] = [];
    for (let i = 0; i < limit + 4; i++) rotating.push((await lookup(i, `10.9.${i}.7, 198.51.100.7`)).status);
    const fixed: number[] = [];
    for (let i = 0; i < limit + 4; i++) fixed.push((await lookup(i, '10.9.0.7, 198.51.100.8')).status);

    expect(firstRefusal(rotating)).toBe(limit);
    expect(firstRefusal(fixed)).toBe(limit);
    expect(rotating.filter((status) => status === 429)).toHaveLength(4);
  });
});

/**
 * A proxy that appends the address it saw, as nginx's `$proxy_add_x_forwarded_for` does (or
 * an RFC 7239 `for=` element), and passes everything else through.
 */
async function appendingProxy(
  upstream: string,
  header: 'x-forwarded-for' | 'forwarded',
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    const seen = req.socket.remoteAddress!;
    const appended = header === 'forwarded' ? `for=${seen.includes(':') ? `"[${seen}]"` : seen}` : seen;
    const prior = req.headers[header];
    const headers: IncomingHttpHeaders = {
      ...req.headers,
      [header]: prior ? `${String(prior)}, ${appended}` : appended,
    };
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** POSTs an action through the proxy from `localAddress` (loopback aliases: two clients on one machine), answering status and reason. */
function postFrom(
  proxy: string,
  localAddress: string,
  action: string,
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<{ status: number; reason?: string }> {
  const target = new URL(proxy);
  const bytes = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        localAddress,
        path: `/?action=${action}`,
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': bytes.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { reason?: string } };
          resolve({ status: res.statusCode!, reason: answer.data?.reason });
        });
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

describe.each(['x-forwarded-for', 'forwarded'] as const)('through a real proxy appending to %s', (header) => {
  let app: SecurityApp | undefined;
  let proxy: Awaited<ReturnType<typeof appendingProxy>> | undefined;
  afterEach(async () => {
    await proxy?.close();
    await app?.close();
    proxy = app = undefined;
  });

  it('limits a client forging X-Forwarded-For, Forwarded and X-Real-IP on every request, and counts another client on its own', async () => {
    app = await startSecurityApp({ server: { trust_proxy_hops: 1, forwarded_header: header } });
    proxy = await appendingProxy(app.url, header);
    const limit = app.deps.config.rate_limits.verifies_per_ip_per_minute;
    const forged = (i: number) => ({
      'X-Forwarded-For': `10.9.${i}.7, 10.8.${i}.1`,
      Forwarded: `for=10.9.${i}.8;proto=https, for="[2001:db8::${i}]"`,
      'X-Real-IP': `10.9.${i}.9`,
    });

    const attacker: Array<{ status: number; reason?: string }> = [];
    for (let i = 0; i < limit + 5; i++)
      attacker.push(
        await postFrom(proxy.url, '127.0.0.2', 'verify_otp', { email: phone(i), otp_code: '000000' }, forged(i)),
      );
    const other = await postFrom(
      proxy.url,
      '127.0.0.3',
      'verify_otp',
      { email: phone(0), otp_code: '000000' },
      forged(0),
    );

    expect(firstRefusal(attacker.map((a) => a.status))).toBe(limit);
    expect(attacker.slice(limit).map((a) => a.reason)).toEqual(Array(5).fill('rate_limited'));
    expect(other).toEqual({ status: 200, reason: 'invalid' });
  });
});

/*
 * An IPv6 client picks any address of its /64 at will (every line, phone and cloud server gets
 * at least one), so it is counted on its /64: rotating the address within it used to give every
 * request a fresh per-IP budget. Behind one appending hop, as the other tests here: the last
 * X-Forwarded-For entry is what the proxy saw.
 */
describe('an IPv6 client behind one appending proxy hop', () => {
  const INTERNAL_KEY = 'internal-key-0123456789abcdef-0123456789';
  let app: SecurityApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  /** An address in 2001:db8:1:<net>::/64, a different one for every i. */
  const inNetwork = (net: number, i: number) =>
    `2001:db8:1:${net.toString(16)}:${(0x1000 + i).toString(16)}:${i.toString(16)}:abcd:${(i * 7).toString(16)}`;

  it('is limited at verifies_per_ip_per_minute when it rotates its address within its /64; another /64 and an IPv4 client are counted on their own', async () => {
    app = await startSecurityApp({ server: { trust_proxy_hops: 1 } });
    const limit = app.deps.config.rate_limits.verifies_per_ip_per_minute;
    const wrongCode = (i: number, client: string) =>
      app!.post('verify_otp', { email: phone(i), otp_code: '000000' }).set('X-Forwarded-For', `10.9.${i}.7, ${client}`);

    const rotating: number[] = [];
    for (let i = 0; i < limit + 5; i++) rotating.push((await wrongCode(i, inNetwork(2, i))).status);
    expect(firstRefusal(rotating)).toBe(limit);
    expect(rotating.filter((status) => status === 429)).toHaveLength(5);

    expect((await wrongCode(0, inNetwork(3, 0))).body.data).toMatchObject({ reason: 'invalid' });
    expect((await wrongCode(0, '198.51.100.7')).body.data).toMatchObject({ reason: 'invalid' });
  });

  it('is one client whether it arrives as IPv4 or IPv4-mapped IPv6', async () => {
    app = await startSecurityApp({ server: { trust_proxy_hops: 1 } });
    const limit = app.deps.config.rate_limits.lookups_per_ip_per_minute;
    const lookup = (i: number, client: string) =>
      app!.post('search_user', { phone: phone(i) }).set('X-Forwarded-For', client);

    const statuses: number[] = [];
    for (let i = 0; i < limit + 2; i++)
      statuses.push((await lookup(i, i % 2 === 0 ? '198.51.100.9' : '::ffff:198.51.100.9')).status);
    expect(firstRefusal(statuses)).toBe(limit);
  });

  it('is locked out of the internal key after wrong_keys_per_ip guesses from rotating addresses of its /64, the right key too', async () => {
    app = await startSecurityApp({ server: { trust_proxy_hops: 1 }, security: { internal_key: INTERNAL_KEY } });
    const allowed = app.deps.config.rate_limits.wrong_keys_per_ip;
    const token = (i: number, key: string) =>
      app!.post('access_token', { uid: MARIO.uid }).set('X-Forwarded-For', inNetwork(2, i)).set('x-internal-key', key);

    const guesses: number[] = [];
    for (let i = 0; i < allowed + 5; i++)
      guesses.push((await token(i, `wrong-key-${i}-0123456789abcdef-0123456789`)).status);
    expect(firstRefusal(guesses)).toBe(allowed);

    const right = await token(1000, INTERNAL_KEY);
    expect(right.status).toBe(429);
    expect(right.body.data).toMatchObject({ reason: 'rate_limited', limit: 'wrong_keys_per_ip' });
  });
});
