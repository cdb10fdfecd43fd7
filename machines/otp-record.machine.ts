import { timingSafeEqual } from 'node:crypto';
import { and, assign, setup } from 'xstate';

/*
 * The lifecycle of one stored one-time code (docs/contract.md#otp-record).
 *
 * The machine is the one definition; stores do not run it. It is compiled once, at start-up, into a
 * transition table (otp-record.table.ts); a store maps what it holds to a state (no record ->
 * `none`, a record -> `valid`), looks one event's step up in the table, runs the guards and
 * updates below, and persists what the named effects say. Time never flows inside the machine: every event carries
 * `now`, so expiry and cooldown are guards, the store needs no timers and tests use a fake clock.
 *
 * Context stays JSON-serialisable. `outcome` and `retryAfterMs` describe the last step for the
 * caller; `previous` is the record a GENERATE replaced, so a failed send can put it back.
 */

export interface OtpPolicy {
  ttlMs: number;
  cooldownMs: number;
  maxAttempts: number;
}

/** What is stored per OTP key: never the code, only its keyed hash (hex). */
export interface OtpRecord {
  hash: string;
  sentAt: number;
  expiresAt: number;
  /** Wrong guesses so far; survives a resend within the code's lifetime. At `maxAttempts` the code is burned. */
  attempts: number;
  /**
   * Where the code went: the E.164 phones and normalised emails it was sent to, separated by a
   * space. Knowing the code proves control of one of these, never of the key the caller chose.
   */
  to: string;
  /**
   * The funnel's anonymous id of the journey that asked for the code (src/domain/funnel/journey-id.ts):
   * random, never derived from the key. A resend within the code's lifetime keeps it, as it keeps
   * the wrong-guess count, so one journey's codes stay one journey.
   */
  journey?: string;
}

export type OtpOutcome =
  'issued' | 'blocked' | 'reverted' | 'kept' | 'ok' | 'invalid' | 'expired' | 'too_many_attempts';

export interface OtpRecordContext {
  record: OtpRecord | null;
  previous: OtpRecord | null;
  outcome: OtpOutcome | null;
  retryAfterMs: number;
}

export type OtpRecordEvent =
  | { type: 'GENERATE'; now: number; hash: string; to: string; policy: OtpPolicy; journey?: string }
  | { type: 'VERIFY'; now: number; hash: string; policy: OtpPolicy }
  /** Every channel refused the code `hash`: put back the record it replaced, unless a newer one took its place. */
  | { type: 'SEND_FAILED'; hash: string; previous: OtpRecord | null };

/** Names of the effects a store must carry out after a step (the machine's only side effects). */
export type OtpRecordEffect = 'storeCode' | 'countWrongGuess' | 'deleteRecord' | 'restorePrevious';

const isLive = (record: OtpRecord | null, now: number): record is OtpRecord =>
  record !== null && now < record.expiresAt;

/** Constant-time equality of two hex digests; different lengths are simply unequal. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

const report = (outcome: OtpOutcome) => ({ type: 'report', params: { outcome } }) as const;

type Guard = (context: OtpRecordContext, event: OtpRecordEvent) => boolean;
type Update = (context: OtpRecordContext, event: OtpRecordEvent) => Partial<OtpRecordContext>;

/**
 * The machine's guards as plain functions of (context, event): the machine's `setup` uses them,
 * and so does the transition table compiled from the machine (otp-record.table.ts).
 */
export const otpGuards = {
  /** The contract: a valid (unexpired) code was sent less than `resend_cooldown_seconds` ago. */
  withinCooldown: (context, event) =>
    event.type === 'GENERATE' &&
    isLive(context.record, event.now) &&
    event.now - context.record.sentAt < event.policy.cooldownMs,
  expired: (context, event) => event.type === 'VERIFY' && !isLive(context.record, event.now),
  /** Every guess was spent: the code stays (its cooldown with it) but nothing matches it any more. */
  burned: (context, event) =>
    event.type === 'VERIFY' && context.record !== null && context.record.attempts >= event.policy.maxAttempts,
  codeMatches: (context, event) =>
    event.type === 'VERIFY' && context.record !== null && sameDigest(context.record.hash, event.hash),
  /** This wrong guess is the last one the record allows. */
  lastAttempt: (context, event) =>
    event.type === 'VERIFY' && context.record !== null && context.record.attempts + 1 >= event.policy.maxAttempts,
  isIssuedCode: (context, event) =>
    event.type === 'SEND_FAILED' && context.record !== null && context.record.hash === event.hash,
  hadPrevious: (_, event) => event.type === 'SEND_FAILED' && event.previous !== null,
} satisfies Record<string, Guard>;
export type OtpGuardName = keyof typeof otpGuards;

/** The machine's context updates (its `assign` actions) as plain functions, shared with the compiled table. */
export const otpUpdates = {
  /**
   * A new code replaces the old one; the wrong-guess count carries over while the old code is
   * still live, so a resend never buys guesses. A burned code's successor keeps one guess: the
   * right code still works after the cooldown, a stranger's wrong guess burns it again.
   */
  replaceCode: (context, event) => {
    if (event.type !== 'GENERATE') return {};
    const live = isLive(context.record, event.now);
    const carried = live ? Math.min(context.record!.attempts, event.policy.maxAttempts - 1) : 0;
    const journey = (live ? context.record!.journey : undefined) ?? event.journey;
    return {
      previous: context.record,
      record: {
        hash: event.hash,
        sentAt: event.now,
        expiresAt: event.now + event.policy.ttlMs,
        attempts: carried,
        to: event.to,
        ...(journey ? { journey } : {}),
      },
      outcome: 'issued' as const,
      retryAfterMs: event.policy.cooldownMs,
    };
  },
  setRetryAfter: (context, event) => ({
    retryAfterMs:
      event.type === 'GENERATE' && context.record ? context.record.sentAt + event.policy.cooldownMs - event.now : 0,
  }),
  addWrongGuess: (context) => ({
    record: context.record && { ...context.record, attempts: context.record.attempts + 1 },
  }),
  forget: () => ({ record: null }),
  putBackPrevious: (context, event) => {
    if (event.type !== 'SEND_FAILED' || !event.previous) return {};
    // Guesses made against the withdrawn code were still guesses: keep the higher count.
    const attempts = Math.max(event.previous.attempts, context.record?.attempts ?? 0);
    return { record: { ...event.previous, attempts } };
  },
} satisfies Record<string, Update>;
export type OtpUpdateName = keyof typeof otpUpdates;

const guard =
  (name: OtpGuardName) =>
  ({ context, event }: { context: OtpRecordContext; event: OtpRecordEvent }) =>
    otpGuards[name](context, event);

export const otpRecordMachine = setup({
  types: {
    context: {} as OtpRecordContext,
    events: {} as OtpRecordEvent,
  },
  guards: {
    withinCooldown: guard('withinCooldown'),
    expired: guard('expired'),
    burned: guard('burned'),
    codeMatches: guard('codeMatches'),
    lastAttempt: guard('lastAttempt'),
    isIssuedCode: guard('isIssuedCode'),
    hadPrevious: guard('hadPrevious'),
  },
  actions: {
    report: assign((_, params: { outcome: OtpOutcome }) => ({ outcome: params.outcome })),
    replaceCode: assign(({ context, event }) => otpUpdates.replaceCode(context, event)),
    setRetryAfter: assign(({ context, event }) => otpUpdates.setRetryAfter(context, event)),
    addWrongGuess: assign(({ context }) => otpUpdates.addWrongGuess(context)),
    forget: assign(() => otpUpdates.forget()),
    putBackPrevious: assign(({ context, event }) => otpUpdates.putBackPrevious(context, event)),
    // Effects: the store persists what the step decided. Implemented by src/ (no-ops here).
    storeCode: () => {},
    countWrongGuess: () => {},
    deleteRecord: () => {},
    restorePrevious: () => {},
  },
}).createMachine({
  id: 'otpRecord',
  context: { record: null, previous: null, outcome: null, retryAfterMs: 0 },
  initial: 'none',
  states: {
    none: {
      on: {
        GENERATE: { target: 'valid', actions: ['replaceCode', 'storeCode'] },
        VERIFY: { target: 'none', actions: report('invalid') },
        SEND_FAILED: { target: 'none', actions: report('kept') },
      },
    },
    valid: {
      on: {
        GENERATE: [
          { guard: 'withinCooldown', target: 'valid', actions: [report('blocked'), 'setRetryAfter'] },
          { target: 'valid', actions: ['replaceCode', 'storeCode'] },
        ],
        VERIFY: [
          // Kept after expiry (not deleted) so that later attempts still hear "expired".
          { guard: 'expired', target: 'expired', actions: report('expired') },
          { guard: 'burned', target: 'valid', actions: report('too_many_attempts') },
          { guard: 'codeMatches', target: 'deleted', actions: ['forget', 'deleteRecord', report('ok')] },
          // Burned, not deleted: the next send for this key still waits out the cooldown (a stranger's guesses cannot buy a resend).
          {
            guard: 'lastAttempt',
            target: 'valid',
            actions: ['addWrongGuess', 'countWrongGuess', report('too_many_attempts')],
          },
          { target: 'valid', actions: ['addWrongGuess', 'countWrongGuess', report('invalid')] },
        ],
        SEND_FAILED: [
          {
            guard: and(['isIssuedCode', 'hadPrevious']),
            target: 'valid',
            actions: ['putBackPrevious', 'restorePrevious', report('reverted')],
          },
          { guard: 'isIssuedCode', target: 'none', actions: ['forget', 'deleteRecord', report('reverted')] },
          { target: 'valid', actions: report('kept') },
        ],
      },
    },
    expired: { type: 'final' },
    deleted: { type: 'final' },
  },
});
