import {
  otpGuards,
  otpRecordMachine,
  otpUpdates,
  type OtpGuardName,
  type OtpOutcome,
  type OtpRecordContext,
  type OtpRecordEffect,
  type OtpRecordEvent,
  type OtpUpdateName,
} from './otp-record.machine';

/*
 * The OTP record machine compiled into a transition table, once, by asking XState itself: for
 * every state a record can be in, every event, and every outcome of the guards that state and
 * event consult, which transition the machine takes (its target and its actions, in order).
 * Stepping a record is then a table lookup plus the machine's own guard and update functions
 * (otpGuards, otpUpdates), instead of XState's `transition()` per store operation (about 150 µs).
 * The machine stays the one definition: the table is derived from it at start-up, and
 * test/machines/otp-record.table.test.ts holds it to `transition()` for every entry.
 */

export type OtpRecordState = 'none' | 'valid';
type EventType = OtpRecordEvent['type'];

type TableAction =
  | { kind: 'update'; name: OtpUpdateName }
  | { kind: 'report'; outcome: OtpOutcome }
  | { kind: 'effect'; name: OtpRecordEffect };

interface TableEntry {
  /** The state value after the step (`none`, `valid`, `expired`, `deleted`). */
  target: string;
  actions: readonly TableAction[];
}

interface EventTable {
  /** The guards this state and event consult, in the order of the mask's bits. */
  guards: readonly OtpGuardName[];
  /** One entry per combination of those guards' outcomes. */
  entries: readonly TableEntry[];
}

export type OtpRecordTable = Record<OtpRecordState, Record<EventType, EventTable>>;

export const OTP_RECORD_STATES: readonly OtpRecordState[] = ['none', 'valid'];
export const OTP_RECORD_EVENTS: readonly EventType[] = ['GENERATE', 'VERIFY', 'SEND_FAILED'];
const GUARD_NAMES = Object.keys(otpGuards) as OtpGuardName[];

const policy = { ttlMs: 1, cooldownMs: 1, maxAttempts: 1 };
const sampleRecord = { hash: 'ab', sentAt: 0, expiresAt: 1, attempts: 0, to: '' };

/** An event of each type: its values do not matter, the guards are answered by the mask. */
export function sampleEvent(type: EventType): OtpRecordEvent {
  if (type === 'GENERATE') return { type, now: 0, hash: 'cd', to: '', policy };
  if (type === 'VERIFY') return { type, now: 0, hash: 'cd', policy };
  return { type, hash: 'cd', previous: null };
}

/** The snapshot of a record in `state`, as a store restores it (guards are looked up on the snapshot's own machine). */
export function sampleSnapshot(state: OtpRecordState, machine: typeof otpRecordMachine = otpRecordMachine) {
  const context: OtpRecordContext = {
    record: state === 'valid' ? sampleRecord : null,
    previous: null,
    outcome: null,
    retryAfterMs: 0,
  };
  return machine.resolveState({ value: state, context });
}

/** The machine with every guard answered from `answers` (and every guard consulted noted in `asked`). */
export function machineAnswering(answers: (guard: OtpGuardName) => boolean, asked?: Set<OtpGuardName>) {
  const guards = Object.fromEntries(GUARD_NAMES.map((name) => [name, () => (asked?.add(name), answers(name))]));
  return otpRecordMachine.provide({ guards: guards as Parameters<typeof otpRecordMachine.provide>[0]['guards'] });
}

function actionOf(action: unknown): TableAction {
  const { type, params } =
    typeof action === 'string'
      ? { type: action, params: undefined }
      : (action as { type: string; params?: { outcome?: OtpOutcome } });
  if (type === 'report' && params?.outcome) return { kind: 'report', outcome: params.outcome };
  if (type in otpUpdates) return { kind: 'update', name: type as OtpUpdateName };
  return { kind: 'effect', name: type as OtpRecordEffect };
}

export function compileOtpRecordTable(): OtpRecordTable {
  let answers = 0;
  let order: OtpGuardName[] = [];
  const asked = new Set<OtpGuardName>();
  const machine = machineAnswering((guard) => {
    const bit = order.indexOf(guard);
    return bit >= 0 && (answers & (1 << bit)) !== 0;
  }, asked);
  const table = {} as OtpRecordTable;
  for (const state of OTP_RECORD_STATES) {
    table[state] = {} as Record<EventType, EventTable>;
    for (const type of OTP_RECORD_EVENTS) {
      const snapshot = sampleSnapshot(state, machine);
      const event = sampleEvent(type);
      // Which guards this state and event consult: every guard asked under any combination of
      // the others (an `and` asks its second guard only when the first is true).
      order = [...GUARD_NAMES];
      asked.clear();
      for (answers = 0; answers < 1 << order.length; answers++) machine.getTransitionData(snapshot, event);
      order = GUARD_NAMES.filter((name) => asked.has(name));
      const entries: TableEntry[] = [];
      for (answers = 0; answers < 1 << order.length; answers++) {
        const [chosen] = machine.getTransitionData(snapshot, event);
        if (!chosen) throw new Error(`otp record machine: ${state} takes no ${type}`);
        const target = chosen.target?.[0]?.key ?? state;
        entries.push({ target, actions: chosen.actions.map(actionOf) });
      }
      table[state][type] = { guards: order, entries };
    }
  }
  return table;
}

export interface OtpRecordStep {
  context: OtpRecordContext;
  target: string;
  effects: OtpRecordEffect[];
}

/** One step of a record: the guards this state and event consult, a lookup, the machine's updates in order. */
export function stepOtpRecord(table: OtpRecordTable, context: OtpRecordContext, event: OtpRecordEvent): OtpRecordStep {
  const state: OtpRecordState = context.record ? 'valid' : 'none';
  const { guards, entries } = table[state][event.type];
  let mask = 0;
  for (let bit = 0; bit < guards.length; bit++) if (otpGuards[guards[bit]!](context, event)) mask |= 1 << bit;
  const entry = entries[mask]!;
  let next = context;
  const effects: OtpRecordEffect[] = [];
  for (const action of entry.actions) {
    if (action.kind === 'update')
      next = {
        ...next,
        ...(otpUpdates[action.name] as (c: OtpRecordContext, e: OtpRecordEvent) => Partial<OtpRecordContext>)(
          next,
          event,
        ),
      };
    else if (action.kind === 'report') next = { ...next, outcome: action.outcome };
    else effects.push(action.name);
  }
  return { context: next, target: entry.target, effects };
}
