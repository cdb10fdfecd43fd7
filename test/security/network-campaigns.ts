import request from 'supertest';
import { deepMerge } from '../../src/core/config/load';
import { testConfig } from '../support/app';
import { appWithRecordingSms } from '../support/fake-sms';

/*
 * Campaigns from whole networks against the bot challenge at its defaults (docs/security.md,
 * "Budgets that nest"), in process, on a fake clock: each request's client address is spoofed
 * through the trusted proxy header (`server.trust_proxy_hops: 1`), as the balancer would set it,
 * and the SMS are counted at a recording provider. A bot never solves and never verifies; it
 * stops at `requests` or when the clock passes `hours`. What each run reports is what
 * docs/security.md quotes: the SMS before the first challenge, when it came, and the SMS after.
 */

export const IT_RANGES = Array.from({ length: 900 }, (_, i) => `393${100 + i}`);

/** A deterministic pseudo-random sequence: the same campaign on every run. */
export function random(seed: number) {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}

export interface Answer {
  success: boolean;
  data: { reason?: string; otp?: string; challenge?: Record<string, unknown> };
}

export interface CampaignResult {
  requests: number;
  sms: number;
  smsBeforeChallenge: number;
  smsAfterChallenge: number;
  challenged: number;
  /** Seconds into the campaign of its first challenge; undefined when none came. */
  firstChallengeAfterSeconds?: number;
  /** The first challenge's signal, from the log line. */
  signals: Record<string, number>;
}

export function networkApp(overrides: Record<string, unknown> = {}) {
  const clock = { now: Date.UTC(2030, 0, 7, 9, 0, 0) };
  const config = testConfig(
    deepMerge(
      {
        otp: { debug: true },
        server: { trust_proxy_hops: 1 },
        sms: { allowed_regions: ['IT', 'GB'] },
        challenge: { mode: 'adaptive' },
      },
      overrides,
    ),
  );
  const { app, deps, sent, metrics } = appWithRecordingSms(config, { now: () => clock.now });
  const generate = async (phone: string, ip: string, challenge?: string): Promise<Answer> =>
    (
      await request(app)
        .post('/otp_generate')
        .set('X-Forwarded-For', ip)
        .send({ uid: phone, ...(challenge ? { challenge } : {}) })
    ).body as Answer;
  const verify = async (phone: string, code: string, ip: string): Promise<boolean> =>
    Boolean(
      (await request(app).post('/verify_otp').set('X-Forwarded-For', ip).send({ email: phone, otp_code: code })).body
        .data?.valid,
    );
  return { clock, config, deps, sent, metrics, generate, verify };
}

const challengeSignals = async (metrics: { render(): Promise<string> }) => {
  const signals: Record<string, number> = {};
  for (const [, signal, count] of (await metrics.render()).matchAll(
    /lfa_challenge_decisions_total\{decision="challenged",signal="(\w+)"\} (\d+)/g,
  ))
    if (Number(count) > 0) signals[signal!] = Number(count);
  return signals;
};

/**
 * A bot campaign: `next(i)` names the i-th request's phone and client address; requests come
 * every `everyMs` of the fake clock.
 */
export async function runBot(
  app: ReturnType<typeof networkApp>,
  {
    requests,
    everyMs,
    next,
  }: { requests: number; everyMs: number; next: (i: number) => { phone: string; ip: string } },
): Promise<CampaignResult> {
  const start = app.clock.now;
  const result: CampaignResult = {
    requests,
    sms: 0,
    smsBeforeChallenge: 0,
    smsAfterChallenge: 0,
    challenged: 0,
    signals: {},
  };
  for (let i = 0; i < requests; i += 1) {
    app.clock.now = start + i * everyMs;
    const { phone, ip } = next(i);
    const before = app.sent.length;
    const answer = await app.generate(phone, ip);
    const sms = app.sent.length - before;
    if (!answer.success && answer.data.reason === 'challenge_required') {
      result.challenged += 1;
      result.firstChallengeAfterSeconds ??= (app.clock.now - start) / 1000;
    }
    result.sms += sms;
    if (result.firstChallengeAfterSeconds === undefined) result.smsBeforeChallenge += sms;
    else result.smsAfterChallenge += sms;
  }
  result.signals = await challengeSignals(app.metrics);
  return result;
}

const hex = (n: number) => n.toString(16);

/** The finding's shape: one /48, a new random /64 of it every three requests, each request a new number in one of 900 Italian ranges. */
export function oneSlash48(seed = 43, prefix = '2001:db8:4c') {
  const rand = random(seed);
  let subnet = 0;
  return (i: number) => {
    if (i % 3 === 0) subnet = Math.floor(rand() * 0x10000);
    const range = IT_RANGES[Math.floor(rand() * IT_RANGES.length)]!;
    return {
      phone: `+${range}${String(Math.floor(rand() * 1e6)).padStart(6, '0')}`,
      ip: `${prefix}:${hex(subnet)}:${hex(Math.floor(rand() * 0x10000))}::${hex(i + 1)}`,
    };
  };
}
