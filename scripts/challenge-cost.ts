/*
 * `npx tsx scripts/challenge-cost.ts [difficulty...]`: what the bot challenge costs, on this
 * machine, for docs/security.md ("Bot challenge"):
 *   - a solver's work per solution (one thread of Node's native SHA-256, ALTCHA's own solver),
 *     which a bot pays per send once challenged, at each difficulty asked (default: the
 *     configuration's ladder under pressure, `pow_difficulty` times `pow_pressure_step` per level
 *     up to `pow_pressure_max` times), and what a thousand solutions and a hundred cost;
 *   - the server's work per challenge issued and per solution verified (µs);
 *   - the adaptive check of a request that is not challenged (µs, the memory store), against a
 *     whole otp_generate (the OTP service with a fake SMS provider) without the check.
 * The time in Chromium comes from the browser test (CHALLENGE_REPORT=1 npx jest test/e2e/challenge.test.ts).
 */

import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import pino from 'pino';
import { loadConfig } from '../src/core/config/load';
import type { Config } from '../src/core/config/schema';
import { createDeps } from '../src/domain/deps';
import { createChallengeGate } from '../src/domain/limits/challenge';
import { createMemoryRateLimiter } from '../src/domain/limits/rate-limiter';
import { createPow } from '../src/domain/limits/pow';
import { createSmsServices } from '../src/domain/sms';
import { createHmac } from 'node:crypto';

const silent = pino({ level: 'silent' });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function configWith(overrides: Record<string, unknown>): Config {
  return loadConfig({
    env: { NODE_ENV: 'test' },
    overrides: { log: { level: 'silent' }, otp: { log_file: '' }, security: { secret: 'x'.repeat(32) }, ...overrides },
  });
}

async function solving(difficulty: number, runs: number) {
  const settings = configWith({ challenge: { pow_difficulty: difficulty } }).challenge;
  const pow = createPow(settings, createHmac('sha256', 'k').update('challenge').digest(), Date.now);
  const times: number[] = [];
  const issue: number[] = [];
  const verify: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    let started = process.hrtime.bigint();
    const challenge = await pow.issue('otp_generate', `id-${i}`);
    issue.push(Number(process.hrtime.bigint() - started) / 1000);
    started = process.hrtime.bigint();
    const solution = await solveChallenge({ challenge, deriveKey });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    const payload = Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
    // Verified several times (its first is the JIT's): the steady cost.
    for (let j = 0; j < 20; j += 1) {
      started = process.hrtime.bigint();
      await pow.verify(payload, 'otp_generate', `id-${i}`);
      verify.push(Number(process.hrtime.bigint() - started) / 1000);
    }
  }
  const mean = times.reduce((sum, t) => sum + t, 0) / times.length;
  return {
    difficulty,
    runs,
    solveMsMedian: round(median(times)),
    solveMsMean: round(mean),
    solveMsMax: round(Math.max(...times)),
    // One core's time: a bot with more cores pays the same CPU, sooner.
    hundredSolutionsSeconds: round((mean * 100) / 1000),
    thousandSolutionsMinutes: round((mean * 1000) / 60_000, 2),
    issueUs: round(median(issue)),
    verifyUs: round(median(verify)),
  };
}

async function checking(rounds: number) {
  const config = configWith({
    challenge: { mode: 'adaptive' },
    sms: { allowed_regions: ['IT'] },
    rate_limits: { sends_per_ip_per_hour: 1e9, sends_per_identifier_per_hour: 1e9, sends_per_recipient: 1e9 },
  });
  const limiter = createMemoryRateLimiter();
  // Every number new: none has a verified history, the dearest path through the check.
  const gate = createChallengeGate(config, {
    limiter,
    now: Date.now,
    secret: 's',
    log: silent,
    spend: async () => true,
    history: { has: async () => false },
    destination: async () => ({ flagged: false, rangeSends: 0, countrySends: 0 }),
  });
  const check: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const ctx = { requestId: 'r', ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, action: 'otp_generate' };
    const started = process.hrtime.bigint();
    await gate.check(ctx, {
      action: 'otp_generate',
      identifier: `+39333${String(i).padStart(7, '0')}`,
      phone: `+39333${String(i).padStart(7, '0')}`,
    });
    check.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  // The whole send without the check: the OTP service, a fake provider, the memory stores.
  const offConfig = configWith({
    sms: { allowed_regions: ['IT'], pumping: { prefix_sends_per_hour: 1e9, country_sends_per_hour: 1e9 } },
    rate_limits: config.rate_limits,
  });
  const sms = createSmsServices(offConfig, {
    log: silent,
    now: Date.now,
    secret: 's',
    history: { has: async () => false },
    providers: [
      {
        name: 'fake',
        kind: 'gateway',
        countries: [],
        weight: 1,
        receipts: false,
        configured: true,
        send: async () => ({ status: 200, durationMs: 0 }),
      },
    ],
  });
  const deps = createDeps(offConfig, { log: silent, otpLog: silent, sms });
  const generate: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const phone = `+39334${String(i).padStart(7, '0')}`;
    const started = process.hrtime.bigint();
    await deps.otp.generate({ requestId: 'r', ip: `10.1.${(i >> 8) & 255}.${i & 255}` }, { key: phone });
    generate.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  await deps.close();
  const [checkUs, generateUs] = [median(check.slice(rounds / 2)), median(generate.slice(rounds / 2))];
  return {
    checkUs: round(checkUs),
    otpGenerateUs: round(generateUs),
    addedPercent: round((100 * checkUs) / generateUs),
  };
}

async function main(): Promise<void> {
  const asked = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  const settings = configWith({}).challenge;
  const ladder: number[] = [];
  for (
    let d = settings.pow_difficulty;
    d <= settings.pow_difficulty * settings.pow_pressure_max;
    d *= settings.pow_pressure_step
  )
    ladder.push(d);
  const difficulties = asked.length > 0 ? asked : ladder;
  const solved = [];
  // Fewer runs of the hardest: each is seconds.
  for (const difficulty of difficulties)
    solved.push(
      await solving(difficulty, Math.max(5, Math.min(20, Math.round((20 * settings.pow_difficulty) / difficulty)))),
    );
  console.log(JSON.stringify({ node: process.version, solved, check: await checking(4000) }, null, 2));
}

void main();
