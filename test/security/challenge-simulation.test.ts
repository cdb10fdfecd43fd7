import { BOT_RANGE, runPumpingCampaign } from './pumping-campaign';

/*
 * The pumping campaign (pumping-campaign.ts) again, with the bot challenge in `adaptive` mode
 * at its default thresholds (docs/security.md, "Bot challenge"). The range's new numbers pass
 * its velocity floor (`challenge.range_velocity_floor`, 5 a minute) within the first minute,
 * before any of its codes can be judged: from then on every bot request is challenged and no
 * SMS goes there, so the range never makes a finding and is not blocked (nothing needs to be);
 * fewer than 1 % of honest requests are challenged. PUMPING_REPORT=1 prints the figures
 * docs/security.md quotes.
 */

describe('an SMS pumping campaign mixed with real users, with the bot challenge adaptive', () => {
  it("sends the bots no SMS once their range's new numbers pass its velocity floor, and challenges under 1 % of real users", async () => {
    const bots = {
      challenged: 0,
      smsBeforeChallenge: 0,
      smsAfterChallenge: 0,
      firstChallengeAt: undefined as number | undefined,
    };
    const people = { challenged: 0, refused: [] as string[] };
    const { deps, sent, honest } = await runPumpingCampaign(
      { challenge: { mode: 'adaptive' } },
      {
        bot: (answer, at, sms) => {
          if (!answer.success && answer.data.reason === 'challenge_required') {
            bots.challenged += 1;
            bots.firstChallengeAt ??= at;
          }
          if (bots.firstChallengeAt === undefined) bots.smsBeforeChallenge += sms;
          else bots.smsAfterChallenge += sms;
        },
        person: (answer, phone) => {
          if (!answer.success && answer.data.reason === 'challenge_required') people.challenged += 1;
          else if (!answer.success) people.refused.push(`${phone}: ${answer.data.reason}`);
        },
      },
    );
    const blocks = await deps.sms.pumping.blocks();

    expect(bots.firstChallengeAt).toBeDefined();
    expect(bots.smsAfterChallenge).toBe(0);
    // The floor, and one more: the sliding minute weighs the previous minute by what is left of it.
    expect(bots.smsBeforeChallenge).toBeLessThanOrEqual(deps.config.challenge.range_velocity_floor + 1);
    expect(bots.firstChallengeAt).toBeLessThan(60_000);
    // Too few codes to judge: the range is never watched nor blocked, and its bots cost nothing more.
    expect(blocks.map((b) => b.range)).not.toContain(BOT_RANGE);
    // Under 1 %: the people asked are those in a range past half its hourly cap (range_rate).
    expect(people.challenged).toBeLessThan(honest.asked * 0.01);
    expect(people.refused).toEqual([]);
    expect(honest.verified).toBeGreaterThan(honest.asked * 0.8);
    if (process.env.PUMPING_REPORT) {
      console.log(
        JSON.stringify({
          bots: { ...bots, firstChallengeAfterSeconds: bots.firstChallengeAt! / 1000 },
          honest: { ...honest, challenged: people.challenged },
          smsTotal: sent.length,
        }),
      );
    }
  }, 120_000);
});
