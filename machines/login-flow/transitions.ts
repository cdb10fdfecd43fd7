import { and } from 'xstate';
import type { Flow } from '../steps';
import type { AdmitParams } from './context';
import type { NamedRefusal } from './refusals';

/* The transitions every journey writes: admitting a request, setting the flow, refusing. */

/** A user-event transition pair: accepted (adopting identifiers) or refused with the reason `admit` gives. */
type AdmittedExtra = { type: 'setFlow'; params: { flow: Flow } } | { type: 'savePhoneLater' };
export const admitted = (target: string, params: AdmitParams, more: AdmittedExtra[] = []) => [
  {
    guard: { type: 'requestAccepted' as const, params },
    target,
    actions: [{ type: 'accept' as const, params }, ...more],
  },
  { target: '#refused', actions: [{ type: 'refuseRequest' as const, params }] },
];
/** `admitted`, taken only when `when` holds (another request on the same screen): otherwise the next transition is tried. */
type OtherRequest = 'declinesPhone';
export const admittedWhen = (when: OtherRequest, target: string, params: AdmitParams) => [
  {
    guard: and([when, { type: 'requestAccepted' as const, params }]),
    target,
    actions: [{ type: 'accept' as const, params }],
  },
  { guard: when, target: '#refused', actions: [{ type: 'refuseRequest' as const, params }] },
];
export const flowIs = (flow: Flow) => ({ type: 'setFlow' as const, params: { flow } });
export const refuse = (reason: NamedRefusal, data?: Record<string, unknown>) => ({
  type: 'refuse' as const,
  params: { reason, ...(data ? { data } : {}) },
});
