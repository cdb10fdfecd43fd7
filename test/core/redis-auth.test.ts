import Redis from 'ioredis';
import tls from 'node:tls';
import request from 'supertest';
import { loadConfig } from '../../src/core/config/load';
import {
  createRedis,
  isCluster,
  redisAnswers,
  redisReady,
  singleServerSecurity,
  type RedisConnection,
} from '../../src/core/redis';
import { createRedisOtpStore } from '../../src/domain/otp/redis-store';
import { memoryLog, smsConfig, smsGateway, useNock } from '../actions/otp/harness';
import { testApp, testConfig, testDeps } from '../support/app';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * Managed Redis that requires AUTH, TLS or both (cluster mode: ElastiCache/MemoryDB, Azure
 * Cache, Redis Cloud): `redis.username`, `redis.password` and `redis.tls` reach every node of a
 * cluster; a single server takes credentials from `redis.url` first and from the keys when the
 * URL has none. A wrong password or a missing TLS is an instance that is not ready and refuses
 * commands at once (no hang), and the password never reaches a log line.
 */

const PASSWORD = 'cluster-secret-0123456789';
const WRONG = 'wrong-secret-9876543210';
const policy = { ttlMs: 300_000, cooldownMs: 60_000, maxAttempts: 5 };
const hash = 'ab'.repeat(32);
const connect = (redis: Record<string, unknown>, logger = memoryLog().logger) =>
  createRedis(loadConfig({ env: { NODE_ENV: 'test' }, overrides: { redis } }), logger);

/** Not ready within a moment, and a command is refused rather than queued. */
async function expectRefused(connection: RedisConnection): Promise<void> {
  await expect(redisReady(connection, 1_500)).rejects.toThrow(/not ready/);
  await expect(connection.set('refused', '1')).rejects.toThrow();
  expect(await redisAnswers(connection).catch(() => false)).toBe(false);
}

/** Codes issued under twelve keys, which spread over every master: each node took the credentials. */
async function expectIssuesEverywhere(connection: RedisConnection, prefix: string): Promise<void> {
  const store = createRedisOtpStore(connection, { prefix });
  const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
  const issued = await Promise.all(keys.map((key) => store.issue(key, hash, Date.now(), policy)));
  expect(issued.map((answer) => answer.status)).toEqual(keys.map(() => 'issued'));
}

describe('a Redis Cluster that requires AUTH (redis.password)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ password: PASSWORD });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('connects with redis.password and serves the stores on every master', async () => {
    const connection = connect({ cluster: cluster.seeds, password: PASSWORD });
    try {
      await redisReady(connection);
      if (!isCluster(connection)) throw new Error('expected the cluster client');
      expect(connection.nodes('master')).toHaveLength(3);
      await expectIssuesEverywhere(connection, 'auth:');
    } finally {
      connection.disconnect();
    }
  });

  it.each([
    ['a wrong password', { password: WRONG }],
    ['no password', {}],
    ['the right password for another user', { username: 'someone', password: PASSWORD }],
  ])('with %s: not ready, commands refused at once, and the password in no log line', async (_, credentials) => {
    const log = memoryLog();
    const connection = connect({ cluster: cluster.seeds, ...credentials }, log.logger);
    try {
      await expectRefused(connection);
    } finally {
      connection.disconnect();
    }
    // Which node refused and why, for the operator: AUTH refused (or demanded).
    expect(JSON.stringify(log.lines)).toMatch(/WRONGPASS|NOAUTH/);
    expect(JSON.stringify(log.lines)).not.toContain(WRONG);
    expect(JSON.stringify(log.lines)).not.toContain(PASSWORD);
  });

  describe('the service on it with a wrong password', () => {
    useNock();
    it('answers store_unavailable and /readyz 503, and sends nothing', async () => {
      const gateway = smsGateway();
      const deps = testDeps(
        testConfig({ ...smsConfig, otp: { store: 'redis' }, redis: { cluster: cluster.seeds, password: WRONG } }),
      );
      try {
        const app = testApp(deps).callback();
        expect((await request(app).get('/readyz')).status).toBe(503);
        const refused = await request(app).post('/?action=otp_generate').send({ uid: '+393331234567' });
        expect(refused.status).toBe(503);
        expect(refused.body).toMatchObject({ success: false, data: { reason: 'store_unavailable' } });
        expect(gateway.sent).toHaveLength(0);
      } finally {
        await deps.close();
      }
    });
  });
});

/*
 * A single server: `redis.url`'s own credentials win (they are the most specific thing the
 * operator wrote); a URL without any takes `redis.username`/`redis.password`.
 */
describe('a single server that requires AUTH', () => {
  let server: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    await admin.config('SET', 'requirepass', PASSWORD);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });
  const withPassword = (password: string) => server.url.replace('redis://', `redis://:${password}@`);

  it.each([
    ['a URL without credentials takes redis.password', () => ({ url: server.url, password: PASSWORD })],
    [
      'credentials in the URL win over a wrong redis.password',
      () => ({ url: withPassword(PASSWORD), password: WRONG }),
    ],
  ])('connects: %s', async (_, redis) => {
    const connection = connect(redis());
    try {
      await redisReady(connection);
      expect(await connection.ping()).toBe('PONG');
    } finally {
      connection.disconnect();
    }
  });

  it("turns TLS on with redis.tls or rediss://, and takes the keys' credentials only when the URL has none", () => {
    const section = (redis: Record<string, unknown>) =>
      singleServerSecurity(loadConfig({ env: { NODE_ENV: 'test' }, overrides: { redis } }).redis);
    expect(section({ url: 'redis://cache.internal:6379', tls: true })).toEqual({ tls: {} });
    // rediss:// is read by ioredis itself; nothing here may override it.
    expect(section({ url: 'rediss://cache.internal:6380' })).toEqual({});
    expect(section({ url: 'rediss://cache.internal:6380', username: 'app', password: PASSWORD })).toEqual({
      username: 'app',
      password: PASSWORD,
    });
    expect(
      section({ url: 'rediss://app:pw@cache.internal:6380', username: 'other', password: PASSWORD, tls: true }),
    ).toEqual({ tls: {} });
  });

  it.each([
    [
      'a wrong password in the URL is not replaced by the right redis.password',
      () => ({ url: withPassword(WRONG), password: PASSWORD }),
    ],
    ['a URL without credentials and no redis.password', () => ({ url: server.url })],
  ])('is refused: %s', async (_, redis) => {
    const connection = connect(redis());
    try {
      await expectRefused(connection);
    } finally {
      connection.disconnect();
    }
  });
});

/*
 * A cluster that speaks only TLS, with AUTH, whose certificate names the host name `localhost`
 * and no address, and whose nodes announce themselves by that name: as ElastiCache does. The
 * test's certificate authority is not one the system trusts, so the tests that expect a
 * connection trust it by adding it to each TLS connection the process makes (a real managed
 * Redis has a certificate from a public CA, which `tls: {}` trusts as it is).
 */
describe('a Redis Cluster over TLS (redis.tls)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ password: PASSWORD, tls: true });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const trustTestCa = () => {
    const connectTls = tls.connect;
    return jest
      .spyOn(tls, 'connect')
      .mockImplementation(((options: tls.ConnectionOptions) =>
        connectTls({ ...options, ca: cluster.ca })) as typeof tls.connect);
  };
  afterEach(() => jest.restoreAllMocks());

  it('connects to seeds given by host name, checks each node against its certificate, and serves the stores', async () => {
    const handshakes = trustTestCa();
    const connection = connect({ cluster: cluster.seeds, password: PASSWORD, tls: true });
    try {
      await redisReady(connection);
      if (!isCluster(connection)) throw new Error('expected the cluster client');
      const masters = connection.nodes('master');
      expect(masters).toHaveLength(3);
      for (const node of masters) {
        expect(node.options.host).toBe('localhost');
        expect(node.stream).toBeInstanceOf(tls.TLSSocket);
        expect((node.stream as tls.TLSSocket).authorized).toBe(true);
      }
      expect(handshakes.mock.calls.map(([options]) => (options as tls.ConnectionOptions).host)).not.toContain(
        '127.0.0.1',
      );
      await expectIssuesEverywhere(connection, 'tls:');
    } finally {
      connection.disconnect();
    }
  });

  it('refuses nodes whose certificate no trusted authority signed', async () => {
    const connection = connect({ cluster: cluster.seeds, password: PASSWORD, tls: true });
    try {
      await expectRefused(connection);
    } finally {
      connection.disconnect();
    }
  });

  it('without redis.tls, or with a wrong password over TLS, is not ready', async () => {
    trustTestCa();
    for (const redis of [{ password: PASSWORD }, { password: WRONG, tls: true }]) {
      const connection = connect({ cluster: cluster.seeds, ...redis });
      try {
        await expectRefused(connection);
      } finally {
        connection.disconnect();
      }
    }
  });
});
