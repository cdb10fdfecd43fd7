import { fromPromise } from 'xstate';
import type { SendOtpInput, SendOtpOutput } from '../../machines/effects';
import { loginFlowMachine, provideEffects } from '../../machines/login-flow.machine';
import { flowRequest } from '../../machines/requests';
import { FlowTimeoutError, runStep } from '../../machines/run-step';
import { PHONE, fakeEffects, request } from './login-flow.fakes';

describe('runStep', () => {
  it('fails loudly when an effect is not provided', async () => {
    const { input, event } = flowRequest('login', { identifier: PHONE });
    await expect(runStep(loginFlowMachine, { input, event })).rejects.toThrow('effect "sendOtp" is not provided');
  });

  it('gives up with FlowTimeoutError naming the state when an effect never settles', async () => {
    const machine = loginFlowMachine.provide({
      actors: { sendOtp: fromPromise<SendOtpOutput, SendOtpInput>(() => new Promise(() => {})) },
    });
    const { input, event } = flowRequest('login', { identifier: PHONE });
    const failure = runStep(machine, { input, event, timeoutMs: 30 });
    await expect(failure).rejects.toBeInstanceOf(FlowTimeoutError);
    await expect(failure).rejects.toThrow('sendingSmsCode');
  });

  it('stops the request’s actor afterwards, aborting an effect still running', async () => {
    let signal: AbortSignal | undefined;
    const machine = provideEffects({
      sendOtp: (_input, abort) => {
        signal = abort;
        return new Promise(() => {});
      },
    });
    const { input, event } = flowRequest('login', { identifier: PHONE });
    await expect(runStep(machine, { input, event, timeoutMs: 30 })).rejects.toBeInstanceOf(FlowTimeoutError);
    expect(signal?.aborted).toBe(true);
  });

  it('pushes its trace into the request’s trace as it goes', async () => {
    const sink: Array<{ step: string }> = [{ step: 'before' }];
    const fakes = fakeEffects();
    const { input, event } = flowRequest('login', { identifier: PHONE });
    await runStep(provideEffects(fakes.effects as never), { input, event, trace: sink });
    expect(sink.map((e) => e.step)).toEqual(['before', 'step_13', 'sendOtp', 'step_14']);
  });

  it('does not send the event when the request is refused while resuming', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'updateProfile', { uid: 'uid-1', city: 'Roma' });
    expect(result).toMatchObject({
      nextStep: null,
      steps: [],
      calls: [],
      output: { ok: false, state: 'refused', failure: { reason: 'proof_required' } },
    });
  });

  it('refuses a proof of the right kind but another step', async () => {
    const fakes = fakeEffects();
    const result = await request(
      fakes,
      'updateProfile',
      { uid: 'uid-1' },
      { claims: { kind: 'verified', step: 61, uid: 'uid-1' } },
    );
    expect(result.output.failure).toEqual({ reason: 'invalid_proof' });
  });

  it('acts on a proof only where the request resumes from it', async () => {
    const fakes = fakeEffects();
    const stray = { kind: 'pending', step: 62, uid: 'uid-1', phone: '+393339876543' };
    const result = await request(
      fakes,
      'verifyOtp',
      { flow: 'phone', phone: PHONE, otp_code: '123456' },
      { claims: stray },
    );
    expect(fakes.calls[0]).toEqual(['verifyOtp', { key: PHONE, code: '123456' }]);
    expect(result.output.ok).toBe(true);
  });
});
