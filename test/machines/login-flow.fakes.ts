import type { EffectName, FlowClaims, FlowEffects, OtpSendMetadata } from '../../machines/effects';
import { provideEffects, type Entry } from '../../machines/login-flow.machine';
import { flowRequest } from '../../machines/requests';
import { runStep, type StepResult } from '../../machines/run-step';

/** Fake effects for machine tests: jest.fn-backed, recording every call (name and input) in order. */

export const PHONE = '+393331234567';
export const NEW_PHONE = '+393339876543';
export const CODE = '123456';

export const SENT: OtpSendMetadata = {
  resent: false,
  retry_after: 60,
  cooldown: 60,
  expires_in: 300,
  notified: { sms: true, email: false },
};

type Impl = {
  [K in EffectName]?: (
    input: Parameters<FlowEffects[K]>[0],
  ) => ReturnType<FlowEffects[K]> | Awaited<ReturnType<FlowEffects[K]>>;
};

const defaults: Required<Impl> = {
  sendOtp: () => SENT,
  verifyOtp: () => 'ok',
  searchUserByPhone: () => ({ found: false }),
  lookupUserByEmail: () => ({ found: false }),
  claimAccount: (input) => ({ heldPhone: input.phone ?? null }),
  releasePhone: () => undefined,
  registerUser: () => ({ uid: 'uid-new' }),
  confirmDoi: () => ({}),
  updateProfile: () => ({ outcome: 'saved' }),
  issueToken: () => ({ access_token: 'token-1', expires_in: 3600 }),
  ingestLogin: () => undefined,
  verifyPasskey: () => ({ uid: 'uid-passkey' }),
  passkeyEnrolOptions: () => ({ options: { challenge: 'challenge-1' }, passkey_proof: 'enrol-proof-1' }),
  enrolPasskey: (input) => ({ passkey: { id: 'cred-new', name: input.name } }),
};

export interface Fakes {
  effects: { [K in EffectName]: jest.Mock };
  /** Every call, in order: [effect name, input]. */
  calls: Array<[EffectName, unknown]>;
  names(): EffectName[];
}

export function fakeEffects(impl: Impl = {}): Fakes {
  const calls: Fakes['calls'] = [];
  const effects = {} as Fakes['effects'];
  for (const name of Object.keys(defaults) as EffectName[]) {
    const run = (impl[name] ?? defaults[name]) as (input: unknown) => unknown;
    effects[name] = jest.fn(async (input: unknown) => {
      calls.push([name, input]);
      return run(input);
    });
  }
  return { effects, calls, names: () => calls.map(([name]) => name) };
}

/** One request through the machine with these fakes, each called as FlowEffects declares it: (input, signal). */
export function request(
  fakes: Fakes,
  entry: Entry,
  body: Record<string, unknown>,
  proof: { claims?: FlowClaims; trusted?: boolean } = {},
): Promise<StepResult> {
  const { input, event } = flowRequest(entry, body, proof);
  const effects = Object.fromEntries(
    Object.entries(fakes.effects).map(([name, fake]) => [
      name,
      (effectInput: unknown, signal: AbortSignal) => fake(effectInput, signal),
    ]),
  );
  return runStep(provideEffects(effects as unknown as FlowEffects), { input, event, timeoutMs: 2000 });
}

/** Claims as a proof of that step would carry them. */
export const claims = (
  kind: string,
  step: number | string,
  flow: string,
  ids: { uid?: string; email?: string; phone?: string },
): FlowClaims => ({ kind, step, flow, ...ids });
