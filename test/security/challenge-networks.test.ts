import { networkApp, oneSlash48, runBot } from './network-campaigns';

/*
 * The fourth round's finding (docs/security.md, "Budgets that nest"): one /48 rotating its /64s
 * (a new one every three requests, so no /64 reaches its three identifiers) with a new number
 * per request in one of 900 Italian ranges got about a thousand codes in seconds, none
 * challenged. The /48's own budget now challenges its new identifiers after a few.
 */

describe('a campaign from one /48 rotating its /64s', () => {
  it("is challenged after at most the /48's identifiers (20) and gets no SMS after", async () => {
    const app = networkApp();
    const identifiers = app.config.challenge.network_48.identifiers;
    const result = await runBot(app, { requests: 300, everyMs: 10, next: oneSlash48() });

    expect(result.firstChallengeAfterSeconds).toBeDefined();
    expect(result.smsBeforeChallenge).toBeLessThanOrEqual(identifiers);
    expect(result.smsAfterChallenge).toBe(0);
    expect(result.sms).toBe(result.smsBeforeChallenge);
    expect(result.challenged).toBe(300 - result.sms);
  });
});

describe('a spike of new numbers to one country', () => {
  it('is challenged within its first seconds, from however many networks it comes', async () => {
    const app = networkApp();
    const floor = app.config.challenge.country_velocity_floor;
    // A thousand in ten seconds, each from a /48 of its own, each a new number in one of 900 Italian ranges.
    const numbers = oneSlash48(11);
    const spread = (i: number) => numbers(i);
    const result = await runBot(app, {
      requests: 1000,
      everyMs: 10,
      next: (i) => ({ ...spread(i), ip: `2001:db8:${(0x1000 + i).toString(16)}::1` }),
    });

    expect(result.firstChallengeAfterSeconds).toBeLessThanOrEqual(2);
    expect(result.smsBeforeChallenge).toBeLessThanOrEqual(floor);
    expect(result.signals).toHaveProperty('country_velocity');
    // Asking on does not make it less of a spike.
    expect(result.smsAfterChallenge).toBe(0);
  });

  it('leaves a handful to a quiet country alone, and a number with a verified history in a spike', async () => {
    const app = networkApp();
    const floor = app.config.challenge.country_velocity_floor;
    const next = oneSlash48(7);
    // A handful: under the floor within a minute, each from its own /48.
    for (let i = 0; i < floor - 5; i++) {
      app.clock.now += 2_000;
      const { phone } = next(i);
      const answer = await app.generate(phone, `2001:db8:${(0x2000 + i).toString(16)}::1`);
      expect(answer.success).toBe(true);
    }
    // Someone verifies their code (a history), then a spike begins.
    const mine = '+393331234567';
    const code = (await app.generate(mine, '2001:db8:abcd::1')).data.otp!;
    expect(await app.verify(mine, code, '2001:db8:abcd::1')).toBe(true);
    app.clock.now += 61_000;
    await runBot(app, {
      requests: 200,
      everyMs: 10,
      next: (i) => ({ ...next(100 + i), ip: `2001:db8:${(0x3000 + i).toString(16)}::1` }),
    });
    expect((await app.generate('+393339876543', '2001:db8:abce::1')).data.reason).toBe('challenge_required');
    expect((await app.generate(mine, '2001:db8:abcd::1')).success).toBe(true);
  });
});
