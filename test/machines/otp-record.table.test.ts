import { transition } from 'xstate';
import {
  otpRecordMachine,
  type OtpPolicy,
  type OtpRecord,
  type OtpRecordContext,
  type OtpRecordEvent,
} from '../../machines/otp-record.machine';
import {
  compileOtpRecordTable,
  machineAnswering,
  OTP_RECORD_EVENTS,
  OTP_RECORD_STATES,
  sampleEvent,
  sampleSnapshot,
  stepOtpRecord,
} from '../../machines/otp-record.table';

/*
 * The compiled table must be the machine: entry by entry against XState's transition() with the
 * same guard outcomes, and step by step against transition() with the real guards over a grid
 * of records and events that reaches every guard outcome.
 */

const table = compileOtpRecordTable();
const policy: OtpPolicy = { ttlMs: 300_000, cooldownMs: 60_000, maxAttempts: 5 };
const RIGHT = 'a'.repeat(64);
const WRONG = 'b'.repeat(64);

describe('the OTP record transition table', () => {
  it('has an entry for every state, event and combination of the guards they consult', () => {
    let entries = 0;
    for (const state of OTP_RECORD_STATES) {
      for (const type of OTP_RECORD_EVENTS) {
        const { guards, entries: row } = table[state][type];
        expect(row).toHaveLength(2 ** guards.length);
        entries += row.length;
      }
    }
    // none: 3 events without guards; valid: GENERATE (1 guard), VERIFY (4), SEND_FAILED (2).
    expect(entries).toBe(3 + 2 + 16 + 4);
  });

  it('takes, for every entry, the target and the effects XState takes with those guard outcomes', () => {
    for (const state of OTP_RECORD_STATES) {
      for (const type of OTP_RECORD_EVENTS) {
        const { guards, entries } = table[state][type];
        entries.forEach((entry, mask) => {
          const machine = machineAnswering(
            (guard) => (mask & (1 << guards.indexOf(guard))) !== 0 && guards.includes(guard),
          );
          const [next, actions] = transition(machine, sampleSnapshot(state, machine), sampleEvent(type));
          expect({ state, type, mask, target: String(next.value), effects: actions.map((a) => a.type) }).toEqual({
            state,
            type,
            mask,
            target: entry.target,
            effects: entry.actions.filter((a) => a.kind === 'effect').map((a) => (a as { name: string }).name),
          });
        });
      }
    }
  });

  describe('steps a record exactly as transition() does, with the real guards', () => {
    const T0 = 1_700_000_000_000;
    const records: Array<OtpRecord | null> = [null];
    for (const attempts of [0, 3, 4, 5]) {
      records.push({ hash: RIGHT, sentAt: T0, expiresAt: T0 + policy.ttlMs, attempts, to: '+393331234567' });
    }
    const times = [
      T0,
      T0 + 1,
      T0 + policy.cooldownMs - 1,
      T0 + policy.cooldownMs,
      T0 + policy.ttlMs - 1,
      T0 + policy.ttlMs,
      T0 + policy.ttlMs + 1,
    ];
    const events: OtpRecordEvent[] = [];
    for (const now of times) {
      events.push({ type: 'GENERATE', now, hash: WRONG, to: 'anna@example.com', policy });
      for (const hash of [RIGHT, WRONG]) events.push({ type: 'VERIFY', now, hash, policy });
    }
    for (const hash of [RIGHT, WRONG]) {
      for (const previous of [
        null,
        { hash: WRONG, sentAt: T0 - 1000, expiresAt: T0 + 1000, attempts: 4, to: '+393331234567' },
      ]) {
        events.push({ type: 'SEND_FAILED', hash, previous });
      }
    }

    const cases = records.flatMap((record) => events.map((event) => ({ record, event })));

    it('reaches every transition of the table with the grid', () => {
      const transitions = new Set<string>();
      const reached = new Set<string>();
      for (const state of OTP_RECORD_STATES)
        for (const type of OTP_RECORD_EVENTS)
          for (const entry of table[state][type].entries) transitions.add(`${state}.${type}:${JSON.stringify(entry)}`);
      for (const { record, event } of cases) {
        const state = record ? 'valid' : 'none';
        const { guards, entries } = table[state][event.type];
        const context: OtpRecordContext = { record, previous: null, outcome: null, retryAfterMs: 0 };
        const mask = guards.reduce(
          (bits, guard, bit) => (evaluates(context, event, guard) ? bits | (1 << bit) : bits),
          0,
        );
        reached.add(`${state}.${event.type}:${JSON.stringify(entries[mask])}`);
      }
      expect([...transitions].filter((t) => !reached.has(t))).toEqual([]);
    });

    it.each(cases.map((c, i) => [i, c] as const))('case %i', (_i, { record, event }) => {
      const context: OtpRecordContext = { record, previous: null, outcome: null, retryAfterMs: 0 };
      const snapshot = otpRecordMachine.resolveState({ value: record ? 'valid' : 'none', context });
      const [next, actions] = transition(otpRecordMachine, snapshot, event);
      const stepped = stepOtpRecord(table, context, event);
      expect({ target: stepped.target, context: stepped.context, effects: stepped.effects }).toEqual({
        target: String(next.value),
        context: next.context,
        effects: actions.map((a) => a.type),
      });
    });
  });
});

/** Whether `guard` holds for this context and event, by the machine's own implementation. */
function evaluates(context: OtpRecordContext, event: OtpRecordEvent, guard: string): boolean {
  const implementation = otpRecordMachine.implementations.guards[guard] as unknown as (args: {
    context: OtpRecordContext;
    event: OtpRecordEvent;
  }) => boolean;
  return implementation({ context, event });
}
