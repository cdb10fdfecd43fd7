import request from 'supertest';
import { createMemorySmsStore, createRedisSmsStore, type SmsStore } from '../../src/domain/sms/store';
import { testConfig } from '../support/app';
import { appWithRecordingSms } from '../support/fake-sms';
import { useRedisTargets } from '../support/redis-targets';

/*
 * Real people in a burst on a fresh store (a launch, a marketing push, a Redis restart that
 * wiped the counters), on the production defaults of the pumping defence: 40 phone logins to
 * one range (`+39 347 5…`) within a minute, under its cap of 60 an hour, each code typed 20 to
 * 55 s after it was sent. None may be refused: a code seconds old is no evidence that nobody
 * verifies the range (docs/security.md, "SMS pumping"). A second wave after the grace, when
 * the first codes are judged, is served too. On the memory store, one Redis and a Redis Cluster.
 */

const RANGE = '+393475';
const person = (i: number) => `${RANGE}${String(100_000 + i).slice(-6)}`;

function burst(makeStore: () => SmsStore) {
  const clock = { now: Date.UTC(2030, 0, 7, 9, 0, 0) };
  const now = () => clock.now;
  const config = testConfig({ otp: { debug: true }, server: { trust_proxy: true }, sms: { allowed_regions: ['IT'] } });
  const store = makeStore();
  const { app, sent, lines } = appWithRecordingSms(config, { now, store });
  const ip = (i: number) => `10.1.${Math.floor(i / 200)}.${i % 200}`;

  /** People `from` to `to` ask for a code 1.5 s apart from `start`; each types it 20 to 55 s later. Answers the refusals. */
  const wave = async (from: number, to: number, start: number) => {
    type Step = { at: number; i: number; code?: string };
    const steps: Step[] = [];
    for (let i = from; i < to; i += 1) steps.push({ at: start + (i - from) * 1500, i });
    const refused: string[] = [];
    while (steps.length > 0) {
      steps.sort((a, b) => a.at - b.at);
      const step = steps.shift()!;
      clock.now = step.at;
      if (step.code === undefined) {
        const answer = (
          await request(app)
            .post('/otp_generate')
            .set('X-Forwarded-For', ip(step.i))
            .send({ uid: person(step.i) })
        ).body;
        if (!answer.success) refused.push(`${step.i}: ${answer.data.reason}`);
        else steps.push({ at: step.at + 20_000 + ((step.i * 7919) % 35_000), i: step.i, code: answer.data.otp });
      } else {
        const answer = (
          await request(app)
            .post('/verify_otp')
            .set('X-Forwarded-For', ip(step.i))
            .send({ email: person(step.i), otp_code: step.code })
        ).body;
        expect(answer.data.valid).toBe(true);
      }
    }
    return refused;
  };
  const rangeEvents = () => lines.map((l) => l.event).filter((e) => e?.startsWith('sms_range'));
  /** The range's judged figures once every verification recorded after its answer has landed (at most 5 s). */
  const judgedWhenSettled = async (at: number, verified: number) => {
    const judging = {
      graceMs: config.sms.pumping.judge_after_seconds * 1000,
      windowMs: config.sms.pumping.block_window_seconds * 1000,
    };
    const deadline = Date.now() + 5000;
    for (;;) {
      const tally = await store.tally('393475', at, null, judging);
      if (tally.verified >= verified || Date.now() > deadline) return tally;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { clock, sent, wave, rangeEvents, judgedWhenSettled };
}

function describeBurst(makeStore: () => SmsStore) {
  it('sends all 40 codes of an honest burst to one range on a fresh store, and a second wave after the grace', async () => {
    const { clock, sent, wave, rangeEvents, judgedWhenSettled } = burst(makeStore);
    const start = clock.now;
    expect(await wave(0, 40, start)).toEqual([]);
    expect(sent).toHaveLength(40);
    // Each code counts for the second it was sent: judged once the grace has passed, all verified.
    expect(await judgedWhenSettled(start + 120_000, 40)).toMatchObject({ sends: 40, verified: 40, watchedSince: null });
    // Two minutes on: the first wave's codes are judged (all verified), and the range is served as before.
    expect(await wave(40, 55, start + 120_000)).toEqual([]);
    expect(sent).toHaveLength(55);
    expect(await judgedWhenSettled(start + 600_000, 55)).toMatchObject({ sends: 55, verified: 55 });
    expect(rangeEvents()).toEqual([]);
  }, 60_000);
}

describe('an honest burst to one range on the memory store', () =>
  describeBurst(() => createMemorySmsStore({ maxEntries: 10_000 })));

const targets = useRedisTargets();
describe.each(targets)('an honest burst to one range on $name', (target) => {
  describeBurst(() => createRedisSmsStore(target.client(), `burst${Math.random().toString(36).slice(2)}:`));
});
