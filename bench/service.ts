import type { Server } from 'node:http';
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { loadConfig } from '../src/core/config/load';
import type { Config } from '../src/core/config/schema';
import { defineAction, type Action } from '../src/actions/action';
import { createApp } from '../src/http/app';
import { createDeps, type Deps } from '../src/domain/deps';
import { startService } from '../src/service';
import { createLogger, type Logger } from '../src/core/logger';
import { createRedis, redisReady } from '../src/core/redis';
import { createOtpHasher } from '../src/domain/otp/code';
import { createMemoryOtpStore } from '../src/domain/otp/memory-store';
import { createRedisOtpStore } from '../src/domain/otp/redis-store';
import type { OtpStore } from '../src/domain/otp/store';
import { actionsByName } from '../src/actions';
import { phoneOf } from './phones';
import { announce, serve } from './child';
import { BENCH_PASSKEY, benchPasskeyPublicKey } from './passkey';
import { BENCH_AID, BENCH_API_TOKEN, BENCH_COLLECTOR_TOKEN, BENCH_SMS_KEY } from './upstreams';

/*
 * The service under load, in its own process: the real start-up (src/service.ts) with every
 * upstream pointed at bench/upstreams.ts, rate limits off, `otp.debug` on (the login case reads
 * the code from FeLogin's answer, as the sandbox does). It answers the runner's commands:
 * `preissue` stores codes straight into the OTP store, so verify_otp has one-shot codes to
 * spend without paying for their sending inside the measurement; `actions` lists the
 * registered actions; `profile-start` and `profile-stop` bracket a measured window.
 */

export const BENCH_SECRET = 'bench-secret-bench-secret-bench-secret!';
export const BENCH_INTERNAL_KEY = 'bench-internal-key';

export interface ServiceOptions {
  upstreams: string;
  store: 'memory' | 'redis';
  redisUrl?: string;
  /** `warn` for the measurements; `info` for the production-logging figure (stdout and the OTP log go to /dev/null). */
  logLevel: 'warn' | 'info' | 'silent';
  /** `funnel.enabled`; default on, as the service ships. */
  funnel?: boolean;
  /** Serve only `bench_noop`, an action that answers its input: what the pipeline costs around any action. */
  floor?: boolean;
  /** `challenge.mode`, with the abuse defences on at thresholds no bench load reaches (defencesNeverCrossed); absent: the defences off. */
  challenge?: 'off' | 'adaptive';
  /** `tracing.sample_ratio`, tracing on and exporting to the fake upstreams' collector; absent: off. */
  tracing?: number;
  /** Passkeys on, on the embedded database in memory, holding the bench's passkey (bench/passkey.ts). */
  passkeys?: boolean;
}

/** More than any bench run sends: a limit, cap or signal that never refuses nor challenges. */
const NEVER = 1_000_000_000;

/**
 * The abuse defences on, as in production, with every threshold out of the bench's reach: the
 * load generator is one client sending to one number range, which the defaults would refuse or
 * challenge within seconds. So the limits, the pumping defence and the challenge's signals all
 * run their counters, and none ever crosses: the challenge pair measures the check that lets a
 * request through.
 */
export function defencesNeverCrossed(mode: 'off' | 'adaptive') {
  return {
    rate_limits: {
      enabled: true,
      sends_per_identifier_per_hour: NEVER,
      sends_per_ip_per_hour: NEVER,
      sends_per_recipient: NEVER,
      verifies_per_ip_per_minute: NEVER,
      lookups_per_ip_per_minute: NEVER,
      lookups_per_account_per_hour: NEVER,
    },
    sms: {
      pumping: {
        country_sends_per_hour: NEVER,
        prefix_sends_per_hour: NEVER,
        watch_sends_per_hour: NEVER,
        block_min_sends: NEVER,
      },
    },
    challenge: {
      mode,
      client_sends: NEVER,
      client_identifiers: NEVER,
      client_verify_failures: NEVER,
      destination_share: 1,
      // The client's wider networks and the new numbers' velocity: counted, never crossed.
      ...Object.fromEntries(
        ['network_56', 'network_48', 'network_24'].map((tier) => [
          tier,
          { sends: NEVER, identifiers: NEVER, verify_failures: NEVER, refused: NEVER },
        ]),
      ),
      country_velocity_floor: NEVER,
      range_velocity_floor: NEVER,
    },
  };
}

/** The action of the `floor` variant: validated input in, the same data out, nothing else. */
export const benchNoop = defineAction({
  name: 'bench_noop',
  request: z.object({ uid: z.string() }),
  handler: async (input) => ({ data: { uid: input.uid } }),
});

/** The service's app (createDeps, createApp) with `bench_noop` as its only action. */
async function startFloor(config: Config, log: Logger): Promise<{ url: string; deps: Deps; close(): Promise<void> }> {
  const deps = createDeps(config, { log });
  const app = createApp(deps, { actions: new Map([[benchNoop.name, benchNoop as unknown as Action]]) });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deps,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.close();
    },
  };
}

export function benchConfig(options: ServiceOptions): Config {
  const defences = options.challenge ? defencesNeverCrossed(options.challenge) : undefined;
  return loadConfig({
    // A tool's run, not production: plain codes in answers are how the bench reads them.
    env: { NODE_ENV: 'development' },
    overrides: {
      // One load generator is one client: the per-client connection cap would measure itself.
      server: { host: '127.0.0.1', port: 0, max_connections_per_client: 0 },
      log: { level: options.logLevel },
      otp: {
        debug: true,
        store: options.store,
        log_file: options.logLevel === 'info' ? '/dev/null' : '',
        max_records: 5_000_000,
      },
      redis: { url: options.redisUrl ?? 'redis://127.0.0.1:6379', key_prefix: 'bench:' },
      sms: {
        api_url: `${options.upstreams}/sms`,
        api_key: BENCH_SMS_KEY,
        sender: 'Bench',
        ...(defences ? defences.sms : {}),
      },
      identity: { base_url: `${options.upstreams}/idp`, aid: BENCH_AID, api_token: BENCH_API_TOKEN },
      user_collector: { base_url: `${options.upstreams}/collector`, internal_token: BENCH_COLLECTOR_TOKEN },
      security: { secret: BENCH_SECRET, internal_key: BENCH_INTERNAL_KEY },
      rate_limits: defences ? defences.rate_limits : { enabled: false },
      ...(defences ? { challenge: defences.challenge } : {}),
      sandbox: { enabled: false },
      funnel: { enabled: options.funnel ?? true },
      ...(options.passkeys
        ? {
            passkeys: { enabled: true, rp_id: BENCH_PASSKEY.rpId, origins: [BENCH_PASSKEY.origin] },
            database: { url: '', embedded_dir: '' },
          }
        : {}),
      // Only when asked: a base build from before tracing has no such section, and refuses one.
      ...(options.tracing === undefined
        ? {}
        : {
            tracing: { enabled: true, otlp_url: `${options.upstreams}/otlp/v1/traces`, sample_ratio: options.tracing },
          }),
    },
  });
}

export interface PreissueCommand {
  /** E.164 keys `${prefix}${index padded to 8 digits}` for index 0..count-1. */
  prefix: string;
  count: number;
  /** The one code every key gets (the keys differ, so the stored hashes differ too). */
  code: string;
}

/** Stores `count` pending codes, as otp_generate would, without sending them. */
async function preissue(store: OtpStore, config: Config, { prefix, count, code }: PreissueCommand): Promise<number> {
  const hash = createOtpHasher(config.security.secret);
  const policy = {
    ttlMs: config.otp.ttl_seconds * 1000,
    cooldownMs: config.otp.resend_cooldown_seconds * 1000,
    maxAttempts: config.otp.max_attempts,
  };
  const now = Date.now();
  const batch = 1000;
  for (let start = 0; start < count; start += batch) {
    const issues: Array<Promise<unknown>> = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const key = phoneOf(prefix, i);
      issues.push(store.issue(key, hash(key, code), now, policy));
    }
    await Promise.all(issues);
  }
  return count;
}

/** The bench's passkey, kept as an enrolment keeps one. */
async function keepBenchPasskey(deps: Deps): Promise<void> {
  const store = await deps.passkeys.store();
  await store.insert({
    id: BENCH_PASSKEY.id,
    publicKey: benchPasskeyPublicKey(),
    counter: 0,
    transports: ['internal'],
    deviceType: 'multiDevice',
    backedUp: true,
    aaguid: '00000000-0000-0000-0000-000000000000',
    userHandle: BENCH_PASSKEY.userHandle,
    uid: BENCH_PASSKEY.uid,
    name: 'Bench',
    createdAt: Date.now(),
    lastUsedAt: null,
  });
}

export async function startBenchService(
  options: ServiceOptions,
): Promise<{ url: string; deps: Deps; preissue(command: PreissueCommand): Promise<number>; close(): Promise<void> }> {
  const config = benchConfig(options);
  const log = createLogger(config.log.level);
  if (options.floor) {
    const floor = await startFloor(config, log);
    return { ...floor, preissue: async () => 0 };
  }
  const redis = config.otp.store === 'redis' ? createRedis(config, log) : undefined;
  if (redis) await redisReady(redis);
  const store = redis
    ? createRedisOtpStore(redis, { prefix: config.redis.key_prefix })
    : createMemoryOtpStore({ maxRecords: config.otp.max_records });
  // The service's own start-up, as `npm start` runs it (src/service.ts), on a store `preissue` can reach.
  const service = await startService(config, { log, redis, otpStore: store });
  if (options.passkeys) await keepBenchPasskey(service.deps);
  return {
    url: service.url,
    deps: service.deps,
    preissue: (command) => preissue(store, config, command),
    close: async () => {
      await service.close();
      redis?.disconnect();
    },
  };
}

/*
 * The V8 CPU profiler (what `node --cpu-prof` starts at launch), started and stopped around one
 * case's measured window only, so start-up and `preissue` stay out of the profile.
 */
function createProfiler() {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))),
    );
  return {
    start: async () => {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 1000 });
      await post('Profiler.start');
    },
    stop: async (file: string) => {
      const { profile } = await post<{ profile: unknown }>('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

if (require.main === module) {
  const options = JSON.parse(process.argv[2] ?? '{}') as ServiceOptions;
  const profiler = createProfiler();
  void startBenchService(options).then((service) => {
    serve(async (command) => {
      switch (command.type) {
        case 'preissue':
          return service.preissue(command as unknown as PreissueCommand);
        case 'actions':
          return [...actionsByName.keys()];
        case 'challenge-mode':
          // What the gate was built with: `rate_limits.enabled: false` turns an adaptive setting off.
          return service.deps.challenge.mode;
        case 'profile-start':
          return profiler.start();
        case 'profile-stop':
          return profiler.stop(String(command.file));
        default:
          throw new Error(`unknown command ${String(command.type)}`);
      }
    });
    announce({ url: service.url });
  });
}
