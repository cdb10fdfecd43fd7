import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import nock from 'nock';
import pino from 'pino';
import { redisReady } from '../../src/core/redis';
import type { Deps } from '../../src/domain/deps';
import { mountFunnel } from '../../src/http/funnel';
import { BASE, fixture, identityConfig, paths, useNock } from '../actions/identity/support';
import { testApp, testDeps } from '../support/app';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * Guessing the keys that open internal surfaces, from outside: the internal key (tokens for
 * any uid), the funnel's read key and the metrics token. A client gets a few wrong keys, then
 * every key it presents, the right one too, is refused 429 until its lockout ends; another
 * client is not affected, a request without a key is no guess, and the warning names the
 * header and the client but never what was guessed. Counted in the store, so two instances on
 * one Redis lock a client out together. Each client is a loopback address of its own.
 */

const INTERNAL_KEY = 'internal-key-0123456789abcdef-0123456789';
const READ_KEY = 'funnel-read-key-0123456789abcdef-0123456';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef-01234567';
const UID = 'PNIa7Xk2mR0ssi';
/** The defaults: rate_limits.wrong_keys_per_ip and rate_limits.wrong_key_lockout_seconds. */
const ALLOWED = 5;
const LOCKOUT_MS = 900_000;
const GUESSER = '127.0.0.2';
const NEIGHBOUR = '127.0.0.3';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { success?: boolean; data?: Record<string, unknown> } & Record<string, unknown>;
  text: string;
}

/** One request from the loopback address `from`: the client address the service counts. */
function send(
  port: number,
  from: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        method,
        path,
        headers: {
          ...headers,
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Answer['body'] = {};
          try {
            parsed = JSON.parse(text) as Answer['body'];
          } catch {
            // /metrics answers text.
          }
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface Surface {
  name: string;
  header: string;
  /** The header's value for a key. */
  value(key: string): string;
  right: string;
  call(port: number, from: string, headers: Record<string, string>): Promise<Answer>;
  /** What a wrong key answered before the lockout existed, kept as it was. */
  wrongAnswer: { status: number; reason: string };
  accepted(answer: Answer): boolean;
}

const surfaces: Surface[] = [
  {
    name: 'x-internal-key',
    header: 'x-internal-key',
    value: (key) => key,
    right: INTERNAL_KEY,
    call: (port, from, headers) => send(port, from, 'POST', '/access_token', headers, { uid: UID }),
    wrongAnswer: { status: 200, reason: 'proof_required' },
    accepted: (answer) => answer.status === 200 && answer.body.success === true,
  },
  {
    name: 'x-funnel-key',
    header: 'x-funnel-key',
    value: (key) => key,
    right: READ_KEY,
    call: (port, from, headers) => send(port, from, 'GET', '/flows/stats?since=1h', headers),
    wrongAnswer: { status: 401, reason: 'unauthorized' },
    accepted: (answer) => answer.status === 200 && answer.body.success === true,
  },
  {
    name: 'the metrics token',
    header: 'authorization',
    value: (key) => `Bearer ${key}`,
    right: METRICS_TOKEN,
    call: (port, from, headers) => send(port, from, 'GET', '/metrics', headers),
    wrongAnswer: { status: 401, reason: 'unauthorized' },
    accepted: (answer) => answer.status === 200 && answer.text.includes('lfa_requests_total'),
  },
];

function keysConfig(overrides: Record<string, unknown> = {}) {
  return identityConfig({
    security: { internal_key: INTERNAL_KEY },
    funnel: { read_key: READ_KEY, flush_ms: 0 },
    metrics: { token: METRICS_TOKEN },
    ...overrides,
  });
}

interface Instance {
  deps: Deps;
  port: number;
  close(): Promise<void>;
}

async function listen(deps: Deps): Promise<Instance> {
  const server: Server = createServer(testApp(deps, { routes: (router) => mountFunnel(router, deps) }).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    deps,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.close();
    },
  };
}

/** The JSON lines a logger wrote at warn and above. */
function warnLog() {
  const lines: string[] = [];
  const log = pino(
    { level: 'warn' },
    new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }),
  );
  return { log, lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** The provider's token call, answered for every accepted internal key. */
const tokenCalls = () => nock(BASE).post(paths.token).query(true).reply(200, fixture('token')).persist();

describe.each(surfaces)('guessing $name', (surface) => {
  useNock();
  let now = Date.now();
  let app: Instance;
  let logged: ReturnType<typeof warnLog>;
  const guess = (i: number) => `guess-${i}-zq`;

  beforeEach(async () => {
    now = Date.now();
    logged = warnLog();
    app = await listen(testDeps(keysConfig(), { now: () => now, log: logged.log }));
    tokenCalls();
  });
  afterEach(() => app.close());

  const call = (from: string, key?: string) =>
    surface.call(app.port, from, key === undefined ? {} : { [surface.header]: surface.value(key) });

  it(`limits 150 wrong keys from one client after ${ALLOWED}, refuses the right key during the lockout, and accepts it after`, async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 150; i++) answers.push(await call(GUESSER, guess(i)));

    for (const wrong of answers.slice(0, ALLOWED))
      expect({ status: wrong.status, reason: wrong.body.data?.reason }).toEqual(surface.wrongAnswer);
    for (const refused of answers.slice(ALLOWED)) {
      expect(refused.status).toBe(429);
      expect(refused.body.data).toMatchObject({ reason: 'rate_limited', limit: 'wrong_keys_per_ip' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(LOCKOUT_MS / 1000);
    }

    const locked = await call(GUESSER, surface.right);
    expect(locked.status).toBe(429);
    expect(locked.body.data).toMatchObject({ reason: 'rate_limited', limit: 'wrong_keys_per_ip' });
    expect(surface.accepted(locked)).toBe(false);

    now += LOCKOUT_MS;
    expect(surface.accepted(await call(GUESSER, surface.right))).toBe(true);
    expect(await app.deps.metrics.render()).toMatch(/lfa_rate_limit_refusals_total\{limit="wrong_keys_per_ip"\} 146/);
  });

  it('locks a client out for exactly rate_limits.wrong_key_lockout_seconds from its first wrong key, and Retry-After says how long is left', async () => {
    for (let i = 0; i < ALLOWED; i++) expect((await call(GUESSER, guess(i))).status).toBe(surface.wrongAnswer.status);
    const first = await call(GUESSER, guess(ALLOWED));
    expect([first.status, first.headers['retry-after'], first.body.data?.retry_after]).toEqual([
      429,
      String(LOCKOUT_MS / 1000),
      LOCKOUT_MS / 1000,
    ]);
    now += LOCKOUT_MS - 60_000;
    const late = await call(GUESSER, surface.right);
    expect([late.status, late.headers['retry-after'], late.body.data?.retry_after]).toEqual([429, '60', 60]);
    now += 59_999;
    expect((await call(GUESSER, surface.right)).headers['retry-after']).toBe('1');
    now += 1;
    expect(surface.accepted(await call(GUESSER, surface.right))).toBe(true);
  });

  it('opens nothing to a request without the key', async () => {
    const none = await call(GUESSER);
    expect(surface.accepted(none)).toBe(false);
    expect({
      status: none.status,
      reason: none.body.data?.reason ?? (none.text.includes('lfa_') ? 'metrics' : undefined),
    }).toEqual(surface.wrongAnswer);
  });

  it('does not lock out another client', async () => {
    for (let i = 0; i <= ALLOWED; i++) await call(GUESSER, guess(i));
    expect((await call(GUESSER, surface.right)).status).toBe(429);

    expect(surface.accepted(await call(NEIGHBOUR, surface.right))).toBe(true);
    const wrong = await call(NEIGHBOUR, 'neighbour-typo');
    expect({ status: wrong.status, reason: wrong.body.data?.reason }).toEqual(surface.wrongAnswer);
  });

  it('counts no request without the key: a public caller sends none', async () => {
    for (let i = 0; i < 50; i++) await call(GUESSER);
    // An empty header is no key either.
    for (let i = 0; i < 50; i++) await surface.call(app.port, GUESSER, { [surface.header]: '' });
    expect(surface.accepted(await call(GUESSER, surface.right))).toBe(true);
    expect(logged.parsed().filter((line) => line.event === 'wrong_key')).toEqual([]);
  });

  it('logs one warning per wrong key, naming the header and the client, never the guess or its length', async () => {
    for (let i = 0; i < ALLOWED + 2; i++) await call(GUESSER, guess(i));

    const warnings = logged.parsed().filter((line) => line.event === 'wrong_key');
    expect(warnings).toHaveLength(ALLOWED + 2);
    for (const line of warnings) {
      expect(line).toMatchObject({ level: 40, msg: 'wrong key refused', header: surface.header, ip: GUESSER });
      // Nothing but the event, the header, the client and the request: no field could carry the guess or its length.
      expect(Object.keys(line).sort()).toEqual([
        'event',
        'header',
        'hostname',
        'ip',
        'level',
        'msg',
        'pid',
        'request_id',
        'time',
      ]);
    }
    const everything = logged.lines.join('\n');
    for (let i = 0; i < ALLOWED + 2; i++) expect(everything).not.toContain(guess(i));
  });
});

describe('the key lockout', () => {
  useNock();
  let now = Date.now();
  const apps: Instance[] = [];
  const start = async (overrides: Record<string, unknown> = {}) => {
    const app = await listen(testDeps(keysConfig(overrides), { now: () => now }));
    apps.push(app);
    return app;
  };
  beforeEach(() => {
    now = Date.now();
    tokenCalls();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  const [internal, funnel, metrics] = surfaces as [Surface, Surface, Surface];

  it('is one per client across every key: wrong funnel keys lock the internal key and the metrics token too', async () => {
    const app = await start();
    for (let i = 0; i <= ALLOWED; i++) await funnel.call(app.port, GUESSER, { 'x-funnel-key': `wrong-${i}` });
    expect((await internal.call(app.port, GUESSER, { 'x-internal-key': INTERNAL_KEY })).status).toBe(429);
    expect((await metrics.call(app.port, GUESSER, { authorization: `Bearer ${METRICS_TOKEN}` })).status).toBe(429);
    // A request without any key is nobody's guess: the client is served as anyone else.
    expect((await send(app.port, GUESSER, 'GET', '/healthz', {})).status).toBe(200);
  });

  it('holds with the rate limits switched off: it guards the keys themselves', async () => {
    const app = await start({ rate_limits: { enabled: false } });
    const answers = [];
    for (let i = 0; i < 20; i++)
      answers.push((await internal.call(app.port, GUESSER, { 'x-internal-key': `wrong-${i}` })).status);
    expect(answers.filter((status) => status === 429)).toHaveLength(20 - ALLOWED);
    expect((await internal.call(app.port, GUESSER, { 'x-internal-key': INTERNAL_KEY })).status).toBe(429);
  });

  it('follows rate_limits.wrong_keys_per_ip', async () => {
    const app = await start({ rate_limits: { wrong_keys_per_ip: 2 } });
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await internal.call(app.port, GUESSER, { 'x-internal-key': `wrong-${i}` })).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
  });
});

describe('the key lockout across two instances on one Redis', () => {
  useNock();
  let redis: RedisServer;
  const fleet: Instance[] = [];
  // Redis keeps the window's time itself: short, yet long enough for a loaded machine to make the guesses inside it.
  const LOCKOUT_SECONDS = 3;

  beforeAll(async () => {
    redis = await startRedisServer();
    const config = keysConfig({
      otp: { store: 'redis' },
      redis: { url: redis.url, key_prefix: 'keys-test:' },
      rate_limits: { wrong_key_lockout_seconds: LOCKOUT_SECONDS },
    });
    for (let i = 0; i < 2; i++) fleet.push(await listen(testDeps(config)));
    await Promise.all(fleet.map((app) => redisReady(app.deps.redis!)));
  }, 30_000);
  afterAll(async () => {
    for (const app of fleet) await app.close();
    await redis?.stop();
  });
  beforeEach(() => tokenCalls());

  const internal = surfaces[0]!;
  const on = (i: number, from: string, key: string) =>
    internal.call(fleet[i % 2]!.port, from, { 'x-internal-key': key });

  it('counts the wrong keys of one client on both instances together, locks it out of both, and lets the right key in once the lockout ends', async () => {
    const answers: Answer[] = [];
    // Alternating: neither instance alone sees more than three.
    for (let i = 0; i <= ALLOWED; i++) answers.push(await on(i, GUESSER, `wrong-${i}`));
    expect(answers.slice(0, ALLOWED).map((a) => a.body.data?.reason)).toEqual(Array(ALLOWED).fill('proof_required'));
    expect(answers[ALLOWED]!.status).toBe(429);
    expect(answers[ALLOWED]!.body.data).toMatchObject({ reason: 'rate_limited', limit: 'wrong_keys_per_ip' });

    for (const i of [0, 1]) {
      const locked = await on(i, GUESSER, INTERNAL_KEY);
      expect({ instance: i, status: locked.status, limit: locked.body.data?.limit }).toEqual({
        instance: i,
        status: 429,
        limit: 'wrong_keys_per_ip',
      });
    }
    // Another client is not locked out, on either instance.
    for (const i of [0, 1]) expect(internal.accepted(await on(i, NEIGHBOUR, INTERNAL_KEY))).toBe(true);

    const retryAfter = Number(answers[ALLOWED]!.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(LOCKOUT_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, LOCKOUT_SECONDS * 1000 + 200));
    for (const i of [0, 1]) expect(internal.accepted(await on(i, GUESSER, INTERNAL_KEY))).toBe(true);
  }, 30_000);
});
