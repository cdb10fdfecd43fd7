import { fromPromise, getMicrosteps, type AnyMachineSnapshot, type EventObject } from 'xstate';
import { loginFlowMachine } from '../../machines/login-flow.machine';
import { macrostep } from '../../machines/macrostep';
import { flowRequest } from '../../machines/requests';
import { resumeSnapshot } from '../../machines/resume';
import { PHONE, SENT } from './login-flow.fakes';

/*
 * macrostep.ts steps the machine through a scope of its own instead of the one XState's pure
 * functions build per call. These tests hold it to XState's own `getMicrosteps`: if XState
 * changes what a scope must be, or how a spawn reaches it, they fail here first.
 */

const done = (id: string, output: unknown) => ({ type: `xstate.done.actor.${id}`, output, actorId: id });

/** What XState's getMicrosteps says: the states passed, and the children each spawn action names. */
function xstateSays(snapshot: AnyMachineSnapshot, event: EventObject) {
  const microsteps = getMicrosteps(loginFlowMachine, snapshot as never, event as never);
  const spawned = microsteps.flatMap(([, actions]) =>
    actions
      .filter((a) => a.type === 'xstate.spawnChild')
      .map((a) => {
        const params = a.params as unknown as { src: string; input: unknown; actorRef: { id: string } };
        return { id: params.actorRef.id, src: params.src, input: params.input };
      }),
  );
  return { states: microsteps.map(([s]) => s.value), spawned, last: microsteps[microsteps.length - 1]![0] };
}

function oursSays(snapshot: AnyMachineSnapshot, event: EventObject) {
  const step = macrostep(loginFlowMachine, snapshot, event);
  return {
    states: step.microsteps.map((s) => s.value),
    spawned: step.spawned.map(({ id, src, input }) => ({ id, src, input })),
    last: step.microsteps[step.microsteps.length - 1]!,
  };
}

describe('macrostep', () => {
  it('passes the states XState passes and names the effects XState would start, with their input', () => {
    const { input, event } = flowRequest('verifyOtp', { flow: 'phone', phone: PHONE, otp_code: '123456' });
    let snapshot = resumeSnapshot(loginFlowMachine, input) as AnyMachineSnapshot;
    const answers: EventObject[] = [
      event,
      done('verifyOtp', 'ok'),
      done('searchUserByPhone', { found: true, uid: 'uid-1', phone: PHONE }),
      done('issueToken', { access_token: 't', expires_in: 60 }),
      done('ingestLogin', undefined),
    ];
    const effects: string[] = [];
    for (const next of answers) {
      const theirs = xstateSays(snapshot, next);
      const ours = oursSays(snapshot, next);
      expect(ours.states).toEqual(theirs.states);
      expect(ours.spawned).toEqual(theirs.spawned);
      expect(ours.last.context).toEqual(theirs.last.context);
      effects.push(...ours.spawned.map((s) => s.src));
      snapshot = ours.last;
    }
    expect(effects).toEqual(['verifyOtp', 'searchUserByPhone', 'issueToken', 'ingestLogin']);
    expect(snapshot.value).toBe('loggedIn');
  });

  it('gives the effect’s input as the invoke computes it', () => {
    const { input, event } = flowRequest('login', { identifier: PHONE });
    const step = macrostep(loginFlowMachine, resumeSnapshot(loginFlowMachine, input), event);
    expect(step.spawned).toEqual([
      {
        id: 'sendOtp',
        src: 'sendOtp',
        input: { key: PHONE, phone: PHONE },
        ref: step.microsteps[step.microsteps.length - 1]!.children.sendOtp,
      },
    ]);
  });

  it('starts nothing it names: the actor the machine was provided with never runs', async () => {
    const started = jest.fn(async () => SENT);
    const machine = loginFlowMachine.provide({ actors: { sendOtp: fromPromise(started) } });
    const { input, event } = flowRequest('login', { identifier: PHONE });
    for (let i = 0; i < 3; i++) macrostep(machine, resumeSnapshot(machine, input), event);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).not.toHaveBeenCalled();
  });

  it('turns an effect’s error the machine does not handle into an error snapshot, as XState does', () => {
    const { input, event } = flowRequest('login', { identifier: PHONE });
    const sending = macrostep(loginFlowMachine, resumeSnapshot(loginFlowMachine, input), event).microsteps.pop()!;
    const failure = new Error('already_sent');
    const error = { type: 'xstate.error.actor.sendOtp', error: failure, actorId: 'sendOtp' };
    const ours = oursSays(sending, error);
    expect(ours.last).toMatchObject({ status: 'error', error: failure });
    expect(xstateSays(sending, error).last).toMatchObject({ status: 'error', error: failure });
  });
});
