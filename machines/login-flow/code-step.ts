import type { SendOtpOutput, VerifyOtpOutput } from '../effects';
import { output, requestOf, type AdmitParams, type LoginFlowStateMeta } from './context';
import { loginFlow } from './setup';
import { admitted, admittedWhen } from './transitions';

/**
 * One code step, as every journey has it: send a code, wait for the user to type it, verify it.
 * Written once (Logto's one code-verification for every interaction, here as three states a
 * journey spreads into its own); each journey names the states (the resume table, the diagrams
 * and the recorded journeys know them by name), says where the code goes, what the waiting
 * screen shows and hands out, and where an accepted code leads. A refused code ends at `#refused`.
 */
interface CodeStep<Sending extends string, Awaiting extends string, Verifying extends string> {
  /** The journey's phone or email, or the new phone the request adds (kept once its code went out). */
  to: 'phone' | 'email' | 'newPhone';
  /** Sending the code; `reachable`: entered from outside its journey, so its id is its key. */
  sending: { name: Sending; reachable?: boolean; tags?: string[] };
  /** The screen where the user types the code: what it shows, the proof it hands out, what a request must name there, and another request it takes. */
  awaiting: {
    name: Awaiting;
    tags: string[];
    meta?: LoginFlowStateMeta;
    admit: AdmitParams;
    instead?: ReturnType<typeof admittedWhen>;
  };
  verifying: { name: Verifying; tags?: string[]; description?: string };
  accepted: { target: string; actions?: 'savePhoneLater' };
}

export function codeStep<const S extends string, const A extends string, const V extends string>(
  step: CodeStep<S, A, V>,
) {
  const key = step.to === 'email' ? 'email' : 'phone';
  const kept = { type: 'keepOtp' as const, params: output<SendOtpOutput> };
  const sending = loginFlow.createStateConfig({
    ...(step.sending.reachable ? { id: step.sending.name } : {}),
    ...(step.sending.tags ? { tags: step.sending.tags } : {}),
    invoke: {
      id: 'sendOtp',
      src: 'sendOtp',
      input: ({ context }) => {
        if (step.to !== 'newPhone') return { key: context[key]!, [key]: context[key]! };
        const phone = requestOf(context, 'ADD_PHONE')!.phone;
        return { key: phone, phone };
      },
      onDone: { target: step.awaiting.name, actions: step.to === 'newPhone' ? [kept, 'keepNewPhone'] : kept },
    },
  });
  const awaiting = loginFlow.createStateConfig({
    tags: step.awaiting.tags,
    ...(step.awaiting.meta ? { meta: step.awaiting.meta } : {}),
    // `instead`: another request the screen takes in place of a code, tried first.
    on: { VERIFY_OTP: [...(step.awaiting.instead ?? []), ...admitted(step.verifying.name, step.awaiting.admit)] },
  });
  const verifying = loginFlow.createStateConfig({
    ...(step.verifying.description ? { description: step.verifying.description } : {}),
    ...(step.verifying.tags ? { tags: step.verifying.tags } : {}),
    invoke: {
      id: 'verifyOtp',
      src: 'verifyOtp',
      // Admitted only with a code (`needs: ['code']`).
      input: ({ context }) => ({ key: context[key]!, code: requestOf(context, 'VERIFY_OTP')!.otp_code! }),
      onDone: [
        {
          guard: { type: 'codeAccepted', params: output<VerifyOtpOutput> },
          target: step.accepted.target,
          ...(step.accepted.actions ? { actions: step.accepted.actions } : {}),
        },
        { target: '#refused', actions: { type: 'refuseCode', params: output<VerifyOtpOutput> } },
      ],
    },
  });
  // Keyed by the journey's names, which the machine's state type is made of.
  return { [step.sending.name]: sending, [step.awaiting.name]: awaiting, [step.verifying.name]: verifying } as Record<
    S,
    typeof sending
  > &
    Record<A, typeof awaiting> &
    Record<V, typeof verifying>;
}
