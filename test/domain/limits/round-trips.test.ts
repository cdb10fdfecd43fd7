import Redis from 'ioredis';
import { redisReady } from '../../../src/core/redis';
import { smsGateway, startApp, useNock, type Harness } from '../../actions/otp/harness';
import { startRedisServer, type RedisServer } from '../../support/redis-server';

/*
 * What a code send asks of Redis for its rate limits, read from the server's own MONITOR: the
 * receiver's two limits (the short window and the hourly ceiling) are one script on two keys
 * that share a hash tag, and the per-IP counter one more, asked earlier in the send (it caps
 * the work before the cooldown checks, so it cannot wait for the receiver's); then the phone's
 * verified history, kept among the limits and read by the pumping defence beside its block read.
 * And what the SMS pumping defence asks of its own store: the same four commands on every send,
 * however many codes its range had.
 */

let server: RedisServer;
let watcher: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  watcher = new Redis(server.url);
}, 30_000);
afterAll(async () => {
  watcher?.disconnect();
  await server?.stop();
});

/** The commands clients sent to the server (not those a script ran) while `during` ran, each as its arguments. */
async function commandsDuring(during: () => Promise<unknown>): Promise<string[][]> {
  const monitor = await watcher.monitor();
  const commands: string[][] = [];
  const end = `end-${Math.random()}`;
  const ended = new Promise<void>((resolve) => {
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === end) resolve();
      else if (source !== 'lua') commands.push(args);
    });
  });
  await during();
  // The server runs commands in order: once this one shows, every command of the send has.
  await watcher.echo(end);
  await ended;
  monitor.disconnect();
  return commands;
}

describe('rate-limit round trips of a code send on Redis', () => {
  useNock();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });

  it("counts the receiver's two limits in one round trip, and the IP in one more; reads the verified history in one", async () => {
    const prefix = `rt${Math.random().toString(36).slice(2)}:`;
    app = await startApp({ otp: { store: 'redis' }, redis: { url: server.url, key_prefix: prefix } });
    await redisReady(app.deps.redis!, 15_000);
    smsGateway();
    // The first send loads the scripts (EVALSHA, then EVAL when the server does not know one yet).
    expect((await app.post('otp_generate', { uid: '+393331000001' })).status).toBe(200);

    const commands = await commandsDuring(async () =>
      expect((await app.post('otp_generate', { uid: '+393331000002' })).status).toBe(200),
    );
    const limitCalls = commands.filter((args) => args.some((arg) => arg.startsWith(`${prefix}rl:`)));
    expect(limitCalls.map((args) => args.filter((arg) => arg.startsWith(`${prefix}rl:`)))).toEqual([
      [`${prefix}rl:sends_per_ip_per_hour:127.0.0.1`],
      [`${prefix}rl:{+393331000002}:sends_per_recipient`, `${prefix}rl:{+393331000002}:sends_per_identifier_per_hour`],
      // The pumping defence's question, in parallel with its block read: a keyed digest, never the number.
      [expect.stringMatching(new RegExp(`^${prefix}rl:challenge_verified:[A-Za-z0-9_-]{22}$`))],
    ]);
    expect(limitCalls.every((args) => args[0]!.toLowerCase() === 'evalsha')).toBe(true);
  });
});

describe('pumping-defence round trips of a code send on Redis', () => {
  useNock();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });

  it("asks four commands: the block read, then both velocities and the range's figures (one script on one key)", async () => {
    const prefix = `rp${Math.random().toString(36).slice(2)}:`;
    app = await startApp({ otp: { store: 'redis' }, redis: { url: server.url, key_prefix: prefix } });
    await redisReady(app.deps.redis!, 15_000);
    smsGateway();
    for (let i = 0; i < 5; i += 1)
      expect((await app.post('otp_generate', { uid: `+39333100001${i}` })).status).toBe(200);

    const commands = await commandsDuring(async () =>
      expect((await app.post('otp_generate', { uid: '+393331000020' })).status).toBe(200),
    );
    const defence = commands.filter((args) => args.some((arg) => /sms:(block|count:vel|range):/.test(arg)));
    expect(
      defence.map((args) => [args[0]!.toLowerCase(), args.find((arg) => arg.startsWith(prefix))!.slice(prefix.length)]),
    ).toEqual([
      ['get', 'sms:block:393331'],
      ['evalsha', expect.stringMatching(/^sms:count:vel:c:IT:/)],
      ['evalsha', expect.stringMatching(/^sms:count:vel:p:393331:/)],
      ['evalsha', 'sms:range:393331'],
    ]);
  });
});
