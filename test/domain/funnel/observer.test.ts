import { apiError } from '../../../src/core/errors';
import type { FunnelEvent } from '../../../src/domain/funnel/counting';
import { createFunnelObserver, type EffectsSeen, type FlowStepSeen } from '../../../src/domain/funnel/observer';

/*
 * The funnel as the runner's observer, alone: what it hears of a step and of a refusal, and the
 * lineage it hands back for the next proof. The journeys through the app are funnel-journey.test.ts's.
 */

function observer() {
  const events: FunnelEvent[] = [];
  let now = 1_900_000_000_000;
  const watching = createFunnelObserver((event) => events.push(event), { now: () => now });
  return { events, watching, tick: (ms: number) => (now += ms) };
}

describe('the funnel observer', () => {
  it('names a fresh journey before the step, so the effects can join it to a code record', () => {
    const { watching } = observer();
    const seen: EffectsSeen = {};
    watching.begin(seen, undefined, 1_900_000_000_000);
    expect(seen.journey).toMatchObject({ fresh: true, trail: [] });
  });

  it('counts an accepted first screen toward the code screen, and hands the next proof its journey and trail', async () => {
    const { watching, events } = observer();
    const seen: EffectsSeen = {};
    watching.begin(seen, undefined, 1_900_000_000_000);
    const step: FlowStepSeen = {
      entry: 'login',
      request: { identifier: '+393331234567' },
      claims: undefined,
      seen,
      from: 'enteringIdentifier',
      output: { ok: true, state: 'awaitingPhoneCode' } as unknown as FlowStepSeen['output'],
    };
    const carried = await watching.stepped(step);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      from: 'enteringIdentifier',
      outcome: 'ok',
      to: 'awaitingPhoneCode',
      toward: '14',
    });
    expect(carried).toEqual({ journey: seen.journey!.id, trail: expect.stringContaining('14') });
  });

  it('counts a refusal with its reason, and carries nothing for a step the machine refused', async () => {
    const { watching, events } = observer();
    const seen: EffectsSeen = {};
    watching.begin(seen, undefined, 1_900_000_000_000);
    watching.refused({
      entry: 'login',
      request: { identifier: 'ada@example.test' },
      seen,
      input: undefined,
      err: apiError('expired'),
    });
    expect(events[0]).toMatchObject({ from: 'enteringIdentifier', outcome: 'expired', toward: '33' });
    const refused: FlowStepSeen = {
      entry: 'verifyOtp',
      request: {},
      claims: undefined,
      seen,
      from: 'awaitingPhoneCode',
      output: { ok: false, failure: { reason: 'invalid' } } as unknown as FlowStepSeen['output'],
    };
    await expect(Promise.resolve(watching.stepped(refused))).resolves.toBeUndefined();
    expect(events[1]).toMatchObject({ from: 'awaitingPhoneCode', outcome: 'invalid' });
    expect(events[1]).not.toHaveProperty('to');
  });
});
