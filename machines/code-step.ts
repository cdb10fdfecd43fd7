import type { SendOtpOutput, VerifyOtpOutput } from './effects';
import { output, requestOf, type AdmitParams, type FlowFailureReason, type LoginFlowContext, type LoginFlowStateMeta } from './login-flow.context';
import type { Flow } from './steps';

/* Transitions the journeys of machines/login-flow.machine.ts share: admitting a request, setting the flow, refusing, and the code step. */

/** A user-event transition pair: accepted (adopting identifiers) or refused with the reason `admit` gives. */
type AdmittedExtra = { type: 'setFlow'; params: { flow: Flow } } | { type: 'savePhoneLater' };
export const admitted = (target: string, params: AdmitParams, more: AdmittedExtra[] = []) => [
  { guard: { type: 'requestAccepted' as const, params }, target, actions: [{ type: 'accept' as const, params }, ...more] },
  { target: '#refused', actions: [{ type: 'refuseRequest' as const, params }] },
];
export const flowIs = (flow: Flow) => ({ type: 'setFlow' as const, params: { flow } });
export const refuse = (reason: FlowFailureReason, data?: Record<string, unknown>) => ({ type: 'refuse' as const, params: { reason, ...(data ? { data } : {}) } });

/**
 * One code step, as every journey has it: send a code, wait for the user to type it, verify it.
 * Written once (Logto's one code-verification for every interaction, here as three states a
 * journey spreads into its own); each journey names the states (the resume table, the diagrams
 * and the recorded journeys know them by name), says where the code goes, what the waiting
 * screen shows and hands out, and where an accepted code leads. A refused code ends at `#refused`.
 */
interface CodeStep<Sending extends string, Awaiting extends string, Verifying extends string> {
  sending: Sending;
  awaiting: Awaiting;
  verifying: Verifying;
  /** The journey's phone or email, or the new phone the request adds (kept once its code went out). */
  to: 'phone' | 'email' | 'newPhone';
  /** The sending state is entered from outside its journey: its id is its key. */
  reachable?: boolean;
  sendingTags?: string[];
  awaitingTags: string[];
  awaitingMeta?: LoginFlowStateMeta;
  admit: AdmitParams;
  verifyingTags?: string[];
  verifyingDescription?: string;
  accepted: { target: string; actions?: 'savePhoneLater' };
}

export function codeStep<S extends string, A extends string, V extends string>(step: CodeStep<S, A, V>) {
  const sendInput =
    step.to === 'email'
      ? ({ context }: { context: LoginFlowContext }) => ({ key: context.email!, email: context.email! })
      : step.to === 'phone'
        ? ({ context }: { context: LoginFlowContext }) => ({ key: context.phone!, phone: context.phone! })
        : ({ context }: { context: LoginFlowContext }) => {
            const phone = requestOf(context, 'ADD_PHONE')!.phone;
            return { key: phone, phone };
          };
  const key = step.to === 'email' ? 'email' : 'phone';
  const kept = { type: 'keepOtp' as const, params: output<SendOtpOutput> };
  const sending = {
    ...(step.reachable ? { id: step.sending } : {}),
    ...(step.sendingTags ? { tags: step.sendingTags } : {}),
    invoke: {
      id: 'sendOtp',
      src: 'sendOtp' as const,
      input: sendInput,
      onDone: { target: step.awaiting, actions: step.to === 'newPhone' ? [kept, 'keepNewPhone' as const] : kept },
    },
  };
  const awaiting = {
    tags: step.awaitingTags,
    ...(step.awaitingMeta ? { meta: step.awaitingMeta } : {}),
    on: { VERIFY_OTP: admitted(step.verifying, step.admit) },
  };
  const verifying = {
    ...(step.verifyingDescription ? { description: step.verifyingDescription } : {}),
    ...(step.verifyingTags ? { tags: step.verifyingTags } : {}),
    invoke: {
      id: 'verifyOtp',
      src: 'verifyOtp' as const,
      input: ({ context }: { context: LoginFlowContext }) => ({ key: context[key]!, code: requestOf(context, 'VERIFY_OTP')!.otp_code }),
      onDone: [
        { guard: { type: 'codeAccepted' as const, params: output<VerifyOtpOutput> }, target: step.accepted.target, ...(step.accepted.actions ? { actions: step.accepted.actions } : {}) },
        { target: '#refused', actions: { type: 'refuseCode' as const, params: output<VerifyOtpOutput> } },
      ],
    },
  };
  // Keyed by the journey's names, which the machine's state type is made of.
  return { [step.sending]: sending, [step.awaiting]: awaiting, [step.verifying]: verifying } as Record<S, typeof sending> & Record<A, typeof awaiting> & Record<V, typeof verifying>;
}

