import pino from 'pino';
import request from 'supertest';
import { deepMerge } from '../../../src/core/config/load';
import { configSchema } from '../../../src/core/config/schema';
import type { Deps } from '../../../src/domain/deps';
import { journeyStart } from '../../../src/domain/funnel/journey-id';
import { verifyProof } from '../../../src/domain/proofs';
import { recordedClaims } from '../../../src/flows/journey-recording';
import { mountFunnel } from '../../../src/http/funnel';
import { startSandbox, type Sandbox } from '../../../src/sandbox';
import { sandboxSeedUsers } from '../../../src/sandbox/identity';
import { eventually } from '../../support/eventually';
import { testApp, testConfig, testDeps } from '../../support/app';

/*
 * One person is one journey, whatever they send: the journey's anonymous id in its proofs (a new
 * one each journey, the same phone or not), a resend flood and a run of wrong codes counted as
 * one person with their repeats and refusals, a proof replayed counted once. Sandbox upstreams,
 * one instance, the memory store.
 */

const log = pino({ level: 'silent' });
const INTERNAL_KEY = 'internal-key-for-the-journey-test';
const GIULIA = sandboxSeedUsers[1]!;
type Answer = { success: boolean; data: Record<string, unknown> };

describe('a journey in the funnel', () => {
  let sandbox: Sandbox;
  let deps: Deps;
  let node: ReturnType<ReturnType<typeof testApp>['callback']>;
  let now = Date.UTC(2025, 4, 10, 9, 0, 0);

  beforeAll(async () => {
    sandbox = await startSandbox(testConfig(), log);
    const config = configSchema.parse(
      deepMerge(sandbox.config as unknown as Record<string, unknown>, {
        sandbox: { enabled: false },
        otp: { resend_cooldown_seconds: 1 },
        rate_limits: { enabled: false },
        security: { internal_key: INTERNAL_KEY },
        funnel: { flush_ms: 0 },
      }),
    );
    deps = testDeps(config, { now: () => now });
    node = testApp(deps, { routes: (router) => mountFunnel(router, deps) }).callback();
  });
  afterAll(async () => {
    await deps.close();
    await sandbox.close();
  });

  const fe = async (action: string, body: Record<string, unknown>) =>
    (await request(node).post(`/${action}`).send(body)).body as Answer;
  const codesFor = (to: string, count: number) =>
    eventually(() => {
      const found = sandbox.outbox.list().filter((m) => m.to.toLowerCase() === to.toLowerCase() && m.code);
      expect(found.length).toBeGreaterThanOrEqual(count);
      return found.map((m) => m.code!);
    });
  const claimsOf = (token: unknown) =>
    verifyProof(deps.proofKey, token, now) as ReturnType<typeof verifyProof> & { journey?: string; trail?: string };
  const stats = async (journey: string) => {
    const res = await request(node).get(`/flows/stats?since=1h&journey=${journey}`).set('x-internal-key', INTERNAL_KEY);
    return res.body.data.journeys[0] as {
      started: number;
      completed: number;
      edges: Array<{ people: number; repeats: number }>;
      screens: Array<Record<string, unknown> & { state: string }>;
    };
  };
  const screenOf = (figures: Awaited<ReturnType<typeof stats>>, state: string) =>
    figures.screens.find((s) => s.state === state)!;

  it('gives each journey an anonymous id of its own, in its proofs with the screens it went through, and keeps it out of what a recording keeps', async () => {
    const phone = '+393338000001';
    const ids: string[] = [];
    for (const round of [0, 1]) {
      now += 120_000;
      expect((await fe('FeLogin', { identifier: phone })).data.next_step).toBe(14);
      const [code] = await codesFor(phone, round + 1);
      const verified = await fe('FeVerifyOtp', { flow: 'phone', phone, otp_code: code });
      expect(verified.data.next_step).toBe(24);
      const claims = claimsOf(verified.data.phone_proof);
      expect(claims.trail).toBe('enteringIdentifier.14.24');
      expect(claims.journey).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(journeyStart(claims.journey!)).toBe(now);
      expect(recordedClaims(claims)).not.toHaveProperty('journey');
      expect(recordedClaims(claims)).not.toHaveProperty('trail');
      ids.push(claims.journey!);
    }
    // The same phone, two journeys: two ids, neither made from the phone.
    expect(ids[0]).not.toBe(ids[1]);
    for (const id of ids) expect(Buffer.from(id, 'base64url').toString('hex')).not.toContain('3338000001');
  });

  it('counts one person however many codes they ask for and wrong codes they type', async () => {
    const phone = '+393338000002';
    now += 120_000;
    for (let i = 0; i < 4; i++) {
      expect((await fe('FeLogin', { identifier: phone })).data.next_step).toBe(14);
      now += 2_000;
    }
    const codes = await codesFor(phone, 4);
    const wrong = ['000000', '000001', '000002', '000003', '000004'].find((c) => !codes.includes(c))!;
    for (let i = 0; i < 3; i++)
      expect((await fe('FeVerifyOtp', { flow: 'phone', phone, otp_code: wrong })).data.reason).toBe('invalid');
    expect((await fe('FeVerifyOtp', { flow: 'phone', phone, otp_code: codes[0] })).data.next_step).toBe(24);
    const figures = await stats('phone-registration');
    const code = screenOf(figures, 'awaitingPhoneCode');
    // This journey's person, once: 4 codes asked are 1 arrival and 3 repeats, 3 wrong codes 1 person and 3 requests.
    expect(code).toMatchObject({ repeats: 3, refusals: [{ reason: 'invalid', count: 3, people: 1 }] });
    expect(figures.edges[0]).toEqual(expect.objectContaining({ people: 3, repeats: 3 }));
    // With the two journeys of the test before: three people, three arrivals.
    expect(code.arrived).toBe(3);
  });

  it('counts a person who replays a proof once', async () => {
    now += 120_000;
    expect((await fe('FeLogin', { identifier: GIULIA.email })).data.next_step).toBe(33);
    const [code] = await codesFor(GIULIA.email, 1);
    const verified = await fe('FeVerifyOtp', { flow: 'email', email: GIULIA.email, otp_code: code });
    expect(verified.data.next_step).toBe(61);
    const proof = verified.data.proof;
    // The 61 proof, presented three times (FeAddPhone does not spend it): three codes, one person on 62.
    for (let i = 0; i < 3; i++) {
      const added = await fe('FeAddPhone', {
        flow: 'email_add_phone',
        phone: '+393338000003',
        uid: verified.data.uid,
        email: GIULIA.email,
        proof,
      });
      expect(added.data.next_step).toBe(62);
      expect(claimsOf(added.data.pending_proof).journey).toBe(claimsOf(proof).journey);
      now += 2_000;
    }
    const figures = await stats('email-login-add-phone');
    expect(screenOf(figures, 'awaitingNewPhoneCode')).toMatchObject({ arrived: 1, repeats: 2 });
    expect(screenOf(figures, 'askingPhone')).toMatchObject({ arrived: 1, continued: 1 });
  });

  it('counts people turned away at the door during an SMS outage, as people of the journeys they were starting', async () => {
    now += 120_000;
    const before = await stats('phone-login');
    sandbox.smsFaults.set('gateway', 'error_5xx');
    sandbox.smsFaults.set('twilio', 'error_5xx');
    try {
      for (let i = 0; i < 3; i++)
        expect((await fe('FeLogin', { identifier: `+39333800010${i}` })).data.reason).toBe('delivery_failed');
    } finally {
      sandbox.smsFaults.clear();
    }
    const after = await stats('phone-login');
    // Not fewer people arriving: three more turned away, none more started, on the phone journeys only.
    expect(after.started).toBe(before.started);
    expect(
      (after as unknown as { turnedAway: number }).turnedAway -
        (before as unknown as { turnedAway: number }).turnedAway,
    ).toBe(3);
    expect((after as unknown as { turnedAwayReasons: unknown[] }).turnedAwayReasons).toEqual([
      expect.objectContaining({ reason: 'delivery_failed', people: 3, count: 3 }),
    ]);
    expect(screenOf(after, 'enteringIdentifier')).toMatchObject({
      turnedAway: 3,
      refusals: expect.arrayContaining([expect.objectContaining({ reason: 'delivery_failed', people: 3, count: 3 })]),
    });
    expect(((await stats('email-login-with-phone')) as unknown as { turnedAway: number }).turnedAway).toBe(0);
  });

  it('counts an early resend refused already_sent on the code screen of its journey, not on the first screen', async () => {
    now += 120_000;
    const phone = '+393338000200';
    const config = { ...deps.config };
    expect(config.otp.resend_cooldown_seconds).toBe(1);
    expect((await fe('FeLogin', { identifier: phone })).data.next_step).toBe(14);
    // Within the cooldown (1 s here): refused, and that journey's.
    const early = await fe('FeLogin', { identifier: phone });
    expect(early.data.reason).toBe('already_sent');
    const figures = await stats('phone-registration');
    expect(screenOf(figures, 'awaitingPhoneCode').refusals).toEqual(
      expect.arrayContaining([expect.objectContaining({ reason: 'already_sent', people: 1, count: 1 })]),
    );
    expect(
      (screenOf(figures, 'enteringIdentifier').refusals as Array<{ reason: string }>).map((r) => r.reason),
    ).not.toContain('already_sent');
  });
});
