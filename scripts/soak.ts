import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/core/config/load';
import { startSoakCluster } from './soak/cluster';
import { floodBot, slash48Bot, SolvingBot } from './soak/bots';
import { Fleet } from './soak/fleet';
import { Journeys } from './soak/journeys';
import { Pumping, PUMPED_RANGE, SOAK_BLOCK_MIN_SENDS, soakJudgeAfterSeconds } from './soak/pumping';
import { parseSoakOptions, SOAK_USAGE, SoakUsageError, type SoakOptions } from './soak/options';
import { killAll, killChildrenOnExit } from './soak/reaper';
import { startSoakRedis, type SoakRedis } from './soak/redis';
import { PowSolver } from './soak/solver';
import { Tally, verdict } from './soak/tally';
import { startUpstreams, type SoakUpstreams } from './soak/upstreams';

/*
 * `npm run soak`: several instances of the real service (src/server.ts, NODE_ENV=production) on
 * one Redis with appendonly (or, with --cluster, a three-master Redis Cluster), the sandbox's fake upstreams, and whole login and registration
 * journeys spread round-robin over the instances for a fixed time. Partway through, Redis is
 * restarted and one instance is killed with SIGKILL and replaced. At the end, once the login
 * ingests have reached the collector, it prints its figures and checks, and exits 1 when a
 * check fails. Beside the journeys, bots ask for SMS they never verify: a pumping campaign from
 * many addresses, a flood from one, a bot from one /48 rotating its /64s, and a bot that solves the bot challenge, which runs as in
 * production (`adaptive`, its default thresholds). docs/operations.md explains the figures.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** At these fractions of the run: Redis restarted, then one instance killed (its replacement's start-up stays clear of the outage). */
const REDIS_RESTART_AT = 0.3;
const INSTANCE_KILL_AT = 0.6;
/** After the load: how long journeys still running may take, and how long the ingests may take to arrive (a killed worker's events wait for its 10 s heartbeat to expire). */
const JOURNEYS_FINISH_MS = 40_000;
const INGEST_DRAIN_MS = 30_000;
/**
 * Journeys started at once at the start, beside the workers, on a store that has never seen a
 * code: a burst of real people to one range (all the journeys' phones share `+39 333 0…`), which
 * the pumping defence must not take for a campaign (it did, until it judged only codes old
 * enough to have been verified). Over twice `SOAK_BLOCK_MIN_SENDS` even in the smoke run.
 */
const OPENING_BURST = 24;

function instanceConfig(
  store: SoakRedis,
  upstreams: SoakUpstreams,
  judgeAfterSeconds: number,
  internalKey: string,
): Record<string, unknown> {
  const plenty = 1_000_000;
  return {
    // The soak is the instances' load balancer: it forwards each journey's and each bot's own address.
    server: { host: '127.0.0.1', shutdown_grace_seconds: 5, trust_proxy_hops: 1 },
    log: { level: 'warn' },
    otp: { store: 'redis', resend_cooldown_seconds: 1, log_file: '' },
    redis: { ...store.config, key_prefix: 'soak:' },
    ...upstreams.config,
    security: { secret: randomBytes(32).toString('base64url'), internal_key: internalKey },
    // On, so their Redis counters are part of the load; high, because all journeys share one range and a few thousand people log in again and again within a minute.
    rate_limits: {
      enabled: true,
      sends_per_identifier_per_hour: plenty,
      sends_per_ip_per_hour: plenty,
      verifies_per_ip_per_minute: plenty,
      lookups_per_ip_per_minute: plenty,
      sends_per_recipient: plenty,
      lookups_per_account_per_hour: plenty,
      password_logins_per_ip: plenty,
      password_logins_per_email: plenty,
      registrations_per_ip_per_hour: plenty,
      subscriptions_per_ip_per_hour: plenty,
      subscriptions_per_email_per_day: plenty,
    },
    // Every journey's phone is in one range (+39333...): the velocity caps would refuse the load (and the bot challenge's
    // range_rate and country_rate, shares of these caps, would ask every journey). The conversion check stays on, with a
    // grace for journeys that type their code at once, and Great Britain is allowed for the bots (scripts/soak/pumping.ts, bots.ts).
    sms: {
      ...upstreams.config.sms,
      allowed_regions: ['IT', 'GB'],
      pumping: {
        ...upstreams.config.sms.pumping,
        country_sends_per_hour: plenty,
        prefix_sends_per_hour: plenty,
        block_min_sends: SOAK_BLOCK_MIN_SENDS,
        judge_after_seconds: judgeAfterSeconds,
      },
    },
    // The challenge is production's default, `adaptive` at the default thresholds (checked at start), but for the velocity
    // floors: every journey's number is new and in one range, at a thousand a minute, which is a spike by any baseline.
    challenge: { country_velocity_floor: plenty, range_velocity_floor: plenty },
    sandbox: { enabled: false },
  };
}

const startStore = (options: SoakOptions, dir: string): Promise<SoakRedis> =>
  options.cluster ? startSoakCluster() : startSoakRedis(dir);

async function main(): Promise<number> {
  const options = parseSoakOptions(process.argv.slice(2));
  if (options === 'help') {
    process.stdout.write(SOAK_USAGE);
    return 0;
  }
  killChildrenOnExit();
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  const tally = new Tally();
  const say = (line: string) => process.stdout.write(`${line}\n`);

  const store = await startStore(options, join(dir, 'redis'));
  const upstreams = await startUpstreams(loadConfig({ env: { NODE_ENV: 'development' }, overrides: {} }));
  const configFile = join(dir, 'config.json');
  const internalKey = randomBytes(32).toString('base64url');
  writeFileSync(
    configFile,
    JSON.stringify(instanceConfig(store, upstreams, soakJudgeAfterSeconds(options.outage), internalKey), null, 2),
  );
  // What the instances make of it: the challenge must be production's default.
  const { challenge } = loadConfig({ env: { NODE_ENV: 'production', CONFIG_FILE: configFile } });
  if (challenge.mode !== 'adaptive')
    throw new Error(`the instances would run the bot challenge in mode ${challenge.mode}, not adaptive`);
  const fleet = new Fleet(configFile, dir);
  await fleet.start(options.instances);
  say(
    `soak: ${options.instances} instances on ${store.describe}, ${options.concurrency} journeys at a time for ${options.duration} s (logs in ${dir})`,
  );

  const honestSolver = new PowSolver();
  const journeys = new Journeys(tally, fleet, upstreams.outbox, honestSolver);
  const startedAt = Date.now();
  const durationMs = options.duration * 1000;
  const endAt = startedAt + durationMs;
  let state = 'redis up';
  let redisRestarted = false;
  let instanceReplaced = false;

  const progress = setInterval(
    () => say(tally.progressLine((Date.now() - startedAt) / 1000, options.duration, upstreams.outbox.issued, state)),
    options.smoke ? 2_000 : 5_000,
  );

  const faults = (async () => {
    await sleep(durationMs * REDIS_RESTART_AT);
    await store.restart(options.outage * 1000, {
      onDown: () => ((tally.redisDownAt = Date.now()), (state = 'redis down'), say('soak: stopping Redis (SIGTERM)')),
      onUp: () => (
        (tally.redisUpAt = Date.now()),
        (state = 'redis back'),
        say(`soak: Redis serves again ${((Date.now() - tally.redisDownAt!) / 1000).toFixed(1)} s after it was stopped`)
      ),
    });
    redisRestarted = true;
    await sleep(Math.max(0, startedAt + durationMs * INSTANCE_KILL_AT - Date.now()));
    const replacement = await fleet.killAndReplace((victim) => {
      tally.instanceKilledAt = Date.now();
      state = `${victim.name} killed`;
      say(`soak: SIGKILL ${victim.name}`);
    });
    instanceReplaced = true;
    state = `${replacement.name} replaced it`;
    say(`soak: ${replacement.name} ready after ${((Date.now() - tally.instanceKilledAt!) / 1000).toFixed(1)} s`);
  })();

  // Bounded in time (the end of the run) and in count (no more journeys than a fast run could start).
  const maxJourneys = options.duration * 500;
  const worker = async () => {
    while (Date.now() < endAt && tally.journeys.started < maxJourneys) await journeys.runNext();
  };
  const opening = Array.from({ length: OPENING_BURST }, () => journeys.runNext());
  const workers = Promise.all([...opening, ...Array.from({ length: options.concurrency }, worker)]);
  const pumping = new Pumping(tally, fleet, soakJudgeAfterSeconds(options.outage), upstreams.outbox, internalKey);
  const flood = floodBot(tally, fleet, upstreams.outbox, challenge.client_identifiers);
  const slash48 = slash48Bot(tally, fleet, upstreams.outbox, challenge.network_48.identifiers);
  const botSolver = new PowSolver();
  const solving = new SolvingBot(tally, fleet, upstreams.outbox, botSolver);
  const bots = Promise.all([pumping.run(endAt), flood.run(endAt), slash48.run(endAt), solving.run(endAt)]);
  await Promise.race([
    Promise.all([workers, faults, bots]),
    sleep(durationMs + JOURNEYS_FINISH_MS).then(() =>
      say('soak: journeys still running after the run: not waited for'),
    ),
  ]);

  // The ingest queue drains: every login answered with a token reaches the collector, or the wait ends.
  state = 'load over, waiting for the ingests';
  const drainDeadline = Date.now() + INGEST_DRAIN_MS;
  while (journeys.lostIngests() > 0 && Date.now() < drainDeadline) await sleep(100);
  clearInterval(progress);
  say(tally.progressLine((Date.now() - startedAt) / 1000, options.duration, upstreams.outbox.issued, 'load over'));

  await fleet.stop();
  await store.stop();
  await upstreams.close();
  honestSolver.close();
  botSolver.close();

  const result = verdict(tally, {
    codesIssued: upstreams.outbox.issued,
    ingestsExpected: journeys.logins.length,
    lostIngests: journeys.lostIngests(),
    redisRestarted,
    instanceReplaced,
    pumping: { ...pumping.figures, smsSpent: upstreams.outbox.codesTo(PUMPED_RANGE) },
    challenge: { flood: flood.settle(), solver: solving.settle(), slash48: slash48.settle() },
  });
  for (const line of result.lines) say(`  ${line}`);
  for (const violation of result.violations) say(`soak: FAILED: ${violation}`);
  if (result.violations.length === 0) rmSync(dir, { recursive: true, force: true });
  else say(`soak: instance logs and Redis data kept in ${dir}`);
  say(result.last);
  return result.violations.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    if (err instanceof SoakUsageError) {
      process.stderr.write(`soak: ${err.message}\n`);
      process.exit(64);
    }
    process.stderr.write(`soak: ${err.stack ?? err.message}\n`);
    killAll();
    process.exit(1);
  },
);
