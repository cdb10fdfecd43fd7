import request from 'supertest';
import { BOT_RANGE, HOUR_MS, runPumpingCampaign } from './pumping-campaign';

/*
 * The pumping campaign (pumping-campaign.ts) against the default thresholds, with the bot
 * challenge off (the test configuration's): the defence must block the bots' range within the
 * hour, spend fewer than 25 SMS on it, and refuse no one in any other range.
 */

describe('an SMS pumping campaign mixed with real users', () => {
  it('is blocked within the hour, costs fewer than 25 SMS, and refuses no real user in other ranges', async () => {
    const refused: string[] = [];
    let blockedAt: number | undefined;
    const { app, sent, honest, botSms } = await runPumpingCampaign(
      { security: { internal_key: 'ops-key-0123456789' } },
      {
        bot: (answer, at) => {
          if (!answer.success && answer.data.reason === 'sms_destination_blocked') blockedAt ??= at;
        },
        person: (answer, phone) => {
          if (!answer.success) refused.push(`${phone}: ${answer.data.reason}`);
        },
      },
    );

    expect(blockedAt).toBeDefined();
    expect(blockedAt!).toBeLessThan(HOUR_MS);
    expect(botSms).toBeLessThan(25);
    expect(refused).toEqual([]);
    expect(honest.verified).toBeGreaterThan(honest.asked * 0.8);
    const report = (await request(app).get('/_sms/ledger?since=7200').set('x-internal-key', 'ops-key-0123456789')).body
      .data;
    expect(report.blocks).toEqual([{ range: BOT_RANGE, until: expect.any(String) }]);
    expect(report.totals.find((g: { country: string }) => g.country === 'GB').sent).toBeLessThan(25 + 60);
    if (process.env.PUMPING_REPORT)
      console.log(
        JSON.stringify({
          bots: { smsSpent: botSms, blockedAfterSeconds: blockedAt! / 1000 },
          honest: { ...honest, refused: refused.length },
          smsTotal: sent.length,
        }),
      );
  }, 120_000);
});
