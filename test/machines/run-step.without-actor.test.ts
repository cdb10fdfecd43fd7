import { createActor } from 'xstate';
import type { FlowEffects } from '../../machines/effects';
import { loginFlowMachine, provideEffects, type Entry } from '../../machines/login-flow.machine';
import { flowRequest } from '../../machines/requests';
import { FlowTimeoutError, runStep } from '../../machines/run-step';
import { PHONE, fakeEffects, type Fakes } from './login-flow.fakes';

// Every actor runStep could make goes through here: a request must make none.
jest.mock('xstate', () => {
  const actual = jest.requireActual('xstate');
  return { ...actual, createActor: jest.fn(actual.createActor) };
});
const actorsMade = createActor as unknown as jest.Mock;

/** One request with its effects handed to runStep (as src/flows does), not provided to the machine. */
function run(
  fakes: Fakes | Partial<FlowEffects>,
  entry: Entry,
  body: Record<string, unknown>,
  options: { timeoutMs?: number; trace?: Array<{ step: string }>; entered?: string[] } = {},
) {
  const { input, event } = flowRequest(entry, body);
  const effects = 'effects' in fakes ? (fakes.effects as unknown as FlowEffects) : fakes;
  return runStep(loginFlowMachine, { input, event, effects, timeoutMs: 2000, ...options });
}
const phoneCode = { flow: 'phone', phone: PHONE, otp_code: '123456' };
const found = { searchUserByPhone: () => ({ found: true as const, uid: 'uid-1', phone: PHONE }) };

describe('runStep without an actor per request', () => {
  it('makes no actor for a request, its effects included, once the machine has been stepped', async () => {
    await run(fakeEffects(), 'login', { identifier: PHONE });
    actorsMade.mockClear();
    const fakes = fakeEffects(found);
    await run(fakes, 'login', { identifier: PHONE });
    const result = await run(fakes, 'verifyOtp', phoneCode);
    expect(result.calls).toEqual(['verifyOtp', 'searchUserByPhone', 'issueToken', 'ingestLogin']);
    expect(fakes.names()).toEqual(['sendOtp', 'verifyOtp', 'searchUserByPhone', 'issueToken', 'ingestLogin']);
    expect(actorsMade).not.toHaveBeenCalled();
  });

  it('answers as the machine provided with the same effects does: steps, calls, states, trace and answer', async () => {
    for (const [entry, body] of [
      ['login', { identifier: PHONE }],
      ['verifyOtp', phoneCode],
      ['login', { identifier: 'anna@example.com' }],
    ] as const) {
      const direct = fakeEffects(found);
      const provided = fakeEffects(found);
      const ours = await run(direct, entry, body);
      const { input, event } = flowRequest(entry, body);
      const theirs = await runStep(provideEffects(provided.effects as unknown as FlowEffects), {
        input,
        event,
        timeoutMs: 2000,
      });
      expect(ours).toEqual(theirs);
      expect(direct.calls).toEqual(provided.calls);
    }
  });

  it('gives up with FlowTimeoutError naming the state, aborting the effect still running', async () => {
    let signal: AbortSignal | undefined;
    const sendOtp = (_input: unknown, abort: AbortSignal) => {
      signal = abort;
      return new Promise<never>(() => {});
    };
    const failure = run({ sendOtp }, 'login', { identifier: PHONE }, { timeoutMs: 30 });
    await expect(failure).rejects.toBeInstanceOf(FlowTimeoutError);
    await expect(failure).rejects.toThrow('sendingSmsCode');
    expect(signal?.aborted).toBe(true);
  });

  it('leaves the signal of an effect that answered alone', async () => {
    const signals: AbortSignal[] = [];
    const fakes = fakeEffects(found);
    const effects = Object.fromEntries(
      Object.entries(fakes.effects).map(([name, fake]) => [
        name,
        (input: unknown, signal: AbortSignal) => (signals.push(signal), fake(input)),
      ]),
    );
    await run(effects as unknown as FlowEffects, 'verifyOtp', phoneCode);
    expect(signals).toHaveLength(4);
    expect(signals.some((s) => s.aborted)).toBe(false);
  });

  it('rejects with the effect’s own error, after recording the call and the states entered', async () => {
    const refusal = Object.assign(new Error('a code was sent less than a minute ago'), { reason: 'already_sent' });
    const fakes = fakeEffects({ sendOtp: () => Promise.reject(refusal) });
    const trace: Array<{ step: string }> = [];
    const entered: string[] = [];
    await expect(run(fakes, 'login', { identifier: PHONE }, { trace, entered })).rejects.toBe(refusal);
    expect(trace.map((e) => e.step)).toEqual(['step_13', 'sendOtp']);
    expect(entered).toEqual(['sendingSmsCode']);
  });

  it('rejects with a thrown effect’s error even when it throws before returning a promise', async () => {
    const bug = new TypeError('not a function');
    const sendOtp = () => {
      throw bug;
    };
    await expect(run({ sendOtp } as unknown as Partial<FlowEffects>, 'login', { identifier: PHONE })).rejects.toBe(bug);
  });

  it('completes the login when the ingest fails: its failure never fails a login', async () => {
    const fakes = fakeEffects({ ...found, ingestLogin: () => Promise.reject(new Error('collector down')) });
    const trace: Array<{ step: string }> = [];
    const result = await run(fakes, 'verifyOtp', phoneCode, { trace });
    expect(result.output).toMatchObject({ ok: true, state: 'loggedIn', nextStep: 90, accessToken: 'token-1' });
    expect(result.calls.slice(-2)).toEqual(['issueToken', 'ingestLogin']);
    expect(trace.map((e) => e.step)).toEqual([
      'verifyOtp',
      'searchUserByPhone',
      'issueToken',
      'login_ingestion',
      'step_90',
    ]);
  });

  it('runs an effect left out of `effects` as the machine was provided with it', async () => {
    const { input, event } = flowRequest('login', { identifier: PHONE });
    await expect(runStep(loginFlowMachine, { input, event, effects: {} })).rejects.toThrow(
      'effect "sendOtp" is not provided',
    );
  });
});
