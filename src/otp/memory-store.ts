import { LRUCache } from 'lru-cache';
import { transition } from 'xstate';
import { otpRecordMachine, type OtpRecordContext, type OtpRecordEvent } from '../../machines/otp-record.machine';
import { retainUntil, type IssueResult, type OtpPolicy, type OtpRecord, type OtpStore, type VerifyOutcome } from './store';

/*
 * OTP records in process memory. Each operation is get -> pure machine step -> set with no
 * `await` in between, so it is atomic within one Node process (not across instances: use the
 * Redis store for that). Bounded by `max_records` (least recently used records go first) and
 * by a per-record TTL that keeps a record EXPIRED_RETENTION_MS past its expiry.
 */

export interface MemoryOtpStoreOptions {
  maxRecords: number;
  /** The clock record times are in (deps.now), so TTLs and expiry move together under a fake clock. */
  now?: () => number;
}

/** `hash|sentAt|expiresAt|attempts`, numbers in base 36: ~90 characters instead of a ~300 B object. */
export function packRecord(record: OtpRecord): string {
  return `${record.hash}|${record.sentAt.toString(36)}|${record.expiresAt.toString(36)}|${record.attempts.toString(36)}`;
}

export function unpackRecord(packed: string): OtpRecord | null {
  const [hash, sentAt, expiresAt, attempts] = packed.split('|');
  if (!hash || sentAt === undefined || expiresAt === undefined || attempts === undefined) return null;
  return { hash, sentAt: parseInt(sentAt, 36), expiresAt: parseInt(expiresAt, 36), attempts: parseInt(attempts, 36) };
}

const emptyContext: OtpRecordContext = { record: null, previous: null, outcome: null, retryAfterMs: 0 };
// Snapshots are immutable: the one "no record" snapshot is shared by every step.
const noneSnapshot = otpRecordMachine.resolveState({ value: 'none', context: emptyContext });

function step(record: OtpRecord | null, event: OtpRecordEvent) {
  const snapshot = record ? otpRecordMachine.resolveState({ value: 'valid', context: { ...emptyContext, record } }) : noneSnapshot;
  const [next, actions] = transition(otpRecordMachine, snapshot, event);
  return { context: next.context, effects: actions.map((action) => action.type) };
}

export function createMemoryOtpStore(options: MemoryOtpStoreOptions): OtpStore {
  // maxSize with a unit size (rather than `max`) so memory grows with use instead of being preallocated.
  const cache = new LRUCache<string, string>({
    maxSize: options.maxRecords,
    sizeCalculation: () => 1,
    perf: { now: options.now ?? Date.now },
    // Read the clock on every check instead of caching it behind a timer per read.
    ttlResolution: 0,
  });

  const read = (key: string): OtpRecord | null => {
    const packed = cache.get(key);
    return packed === undefined ? null : unpackRecord(packed);
  };

  /** Carries out the effects the machine named for one step on `key`. */
  const apply = (key: string, effects: string[], context: OtpRecordContext, now?: number) => {
    for (const effect of effects) {
      if (effect === 'deleteRecord') cache.delete(key);
      else if (effect === 'storeCode' && context.record && now !== undefined) {
        cache.set(key, packRecord(context.record), { ttl: Math.max(1, retainUntil(context.record) - now) });
      } else if ((effect === 'countWrongGuess' || effect === 'restorePrevious') && context.record) {
        // Same key, same or shorter life: keep the entry's TTL.
        cache.set(key, packRecord(context.record), { noUpdateTTL: true });
      }
    }
  };

  return {
    async issue(key: string, hash: string, now: number, policy: OtpPolicy): Promise<IssueResult> {
      const { context, effects } = step(read(key), { type: 'GENERATE', now, hash, policy });
      if (context.outcome === 'blocked' || !context.record) return { status: 'blocked', retryAfterMs: Math.max(1, context.retryAfterMs) };
      apply(key, effects, context, now);
      return { status: 'issued', record: context.record, previous: context.previous };
    },

    async revert(key: string, hash: string, previous: OtpRecord | null): Promise<boolean> {
      const { context, effects } = step(read(key), { type: 'SEND_FAILED', hash, previous });
      apply(key, effects, context);
      return context.outcome === 'reverted';
    },

    async verify(key: string, hash: string, now: number, policy: OtpPolicy): Promise<VerifyOutcome> {
      const { context, effects } = step(read(key), { type: 'VERIFY', now, hash, policy });
      apply(key, effects, context, now);
      const outcome = context.outcome;
      return outcome === 'ok' || outcome === 'expired' || outcome === 'too_many_attempts' ? outcome : 'invalid';
    },

    async ping() {
      return true;
    },

    async close() {
      cache.clear();
    },
  };
}
