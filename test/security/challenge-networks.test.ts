import { networkApp, oneSlash48, runBot } from './network-campaigns';

/*
 * The fourth round's finding (docs/security.md, "Budgets that nest"): one /48 rotating its /64s
 * (a new one every three requests, so no /64 reaches its three identifiers) with a new number
 * per request in one of 900 Italian ranges got about a thousand codes in seconds, none
 * challenged. The /48's own budget now challenges its new identifiers after a few.
 */

describe('a campaign from one /48 rotating its /64s', () => {
  it('is challenged after at most the /48\'s identifiers (20) and gets no SMS after', async () => {
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
