import type { OtpPolicy, OtpRecord } from '../../../machines/otp-record.machine';

export type { OtpPolicy, OtpRecord };

/*
 * Where OTP records live. Every method is ONE atomic step on one key, never get-then-set in the
 * caller, so a Redis implementation (one Lua script per method) can keep the same semantics as
 * the memory store: the test suite in test/domain/otp/store-contract.ts runs against both.
 */

export type IssueResult =
  | { status: 'issued'; record: OtpRecord; previous: OtpRecord | null }
  /** `journey`: the funnel journey the code already sent carries (an early resend is that journey's). */
  | { status: 'blocked'; retryAfterMs: number; journey?: string };

export type VerifyOutcome = 'ok' | 'invalid' | 'expired' | 'too_many_attempts';

/**
 * One verification: `to` (where the accepted code went) and `sentAt` (when it was issued, epoch ms) only with `ok`;
 * `journey` (the funnel's anonymous journey id the record carries) whenever a record was there.
 */
export type VerifyResult =
  | { outcome: 'ok'; to: string; sentAt: number; journey?: string }
  | { outcome: Exclude<VerifyOutcome, 'ok'>; journey?: string };

export type ClaimResult = { claimed: true } | { claimed: false; retryAfterMs: number };

export interface OtpStore {
  /**
   * Check the cooldown and store a new code hash in one step. A live code sent less than
   * `policy.cooldownMs` ago blocks (nothing changes); otherwise the new record replaces it,
   * carrying over the wrong-guess count while the replaced code was still live.
   * `previous` is what was replaced, for `revert`. `to` lists where the code goes (default: the key).
   * `journey` is stored with the code unless the replaced code was live and had one (then that one stays).
   */
  issue(key: string, hash: string, now: number, policy: OtpPolicy, to?: string, journey?: string): Promise<IssueResult>;
  /**
   * Compare-and-set back after every channel refused the code: when the key still holds `hash`,
   * restore `previous` (keeping the higher wrong-guess count) or delete the record when there
   * was none. So a failed send charges no cooldown and buys no guesses. False when a newer code
   * took its place (nothing changes).
   */
  revert(key: string, hash: string, previous: OtpRecord | null): Promise<boolean>;
  /** The funnel journey the live record of `key` carries, if any (an early resend refused by its recipient's cooldown is that journey's). */
  journeyOf(key: string, now: number): Promise<string | undefined>;
  /**
   * Compare, count and delete in one step: `ok` deletes the record (one-shot) and says where the
   * code went; the last wrong guess burns it (kept, so its cooldown still holds, matching nothing).
   */
  verify(key: string, hash: string, now: number, policy: OtpPolicy): Promise<VerifyResult>;
  /**
   * The resend cooldown of one receiving phone or email, whatever key the code was for: set
   * `token` for `cooldownMs` unless another send holds the address (then how long it still does).
   */
  claimRecipient(address: string, token: string, cooldownMs: number): Promise<ClaimResult>;
  /** Gives an address back when nothing reached it (compare-and-delete on `token`). */
  releaseRecipient(address: string, token: string): Promise<void>;
  /** Frees an address whose code was just accepted: its owner is acting, not being bombed. */
  clearRecipient(address: string): Promise<void>;
  /**
   * Records a proof id as spent until `untilMs` (epoch ms, the proof's expiry). True when this
   * call spent it; false when it was spent already. Atomic across instances.
   */
  spendProof(id: string, untilMs: number): Promise<boolean>;
  /** Undoes `spendProof` when the request it authorised changed nothing (a wrong code, an upstream outage). */
  unspendProof(id: string): Promise<void>;
  /**
   * Records that the owner of an account's email claimed it at `atMs` (email-claim): proofs
   * naming the account that were issued before then are void. Kept `ttlMs` (the proof lifetime:
   * older proofs have expired by then).
   */
  markAccountClaimed(uid: string, atMs: number, ttlMs: number): Promise<void>;
  /** When the account was last claimed, or null. */
  accountClaimedAt(uid: string): Promise<number | null>;
  /**
   * Holds a phone (E.164) for an account until `ttlMs` from now: the phone a claim just dropped
   * from it, until its owner proves or declines it (email-claim.ts). While held, the phone is
   * the account's for every check (no other account may add it, it logs no one in).
   */
  holdPhone(uid: string, phone: string, ttlMs: number): Promise<void>;
  /** The phone held for an account, or null. */
  heldPhoneOf(uid: string): Promise<string | null>;
  /** The account a phone is held for, or null. */
  phoneHeldFor(phone: string): Promise<string | null>;
  /** Ends an account's hold: both directions, the phone's only while it still names this account. */
  releasePhone(uid: string): Promise<void>;
  /** True when the store answers (readiness). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * How long a record is kept after its code expired, so a late attempt still hears "expired"
 * rather than "invalid". One hour; after that the key is simply unknown.
 */
export const EXPIRED_RETENTION_MS = 60 * 60 * 1000;

/** When a store may forget a record. */
export const retainUntil = (record: OtpRecord): number => record.expiresAt + EXPIRED_RETENTION_MS;
