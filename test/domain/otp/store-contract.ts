import type { OtpPolicy, OtpStore } from '../../../src/domain/otp/store';

/*
 * The behaviour every OtpStore must have, as one suite: the memory store runs it now, the Redis
 * store runs the very same suite later (`describeOtpStore('redis', () => createRedisOtpStore(...))`).
 * Time is passed to each call, never read from a clock, so the suite needs no timers.
 */

export const contractPolicy: OtpPolicy = { ttlMs: 300_000, cooldownMs: 60_000, maxAttempts: 5 };
const T0 = 1_700_000_000_000;
/** A distinct 64-hex-digit hash per label. */
const h = (label: string) => Buffer.from(label.padEnd(32, '.')).toString('hex').slice(0, 64);
const A = h('code-a');
const B = h('code-b');
const WRONG = h('wrong');

/** A store's clock for the markers that expire by themselves: a fake one (memory) moves at once; Redis keeps real time. */
export interface ContractClock {
  advance(ms: number): void;
}

export function describeOtpStore(
  name: string,
  makeStore: () => OtpStore | Promise<OtpStore>,
  clock?: ContractClock,
): void {
  const wait = async (ms: number) => (clock ? clock.advance(ms) : new Promise((resolve) => setTimeout(resolve, ms)));
  describe(`OtpStore contract: ${name}`, () => {
    let store: OtpStore;
    let key: string;
    let n = 0;
    const policy = contractPolicy;

    beforeEach(async () => {
      store = await makeStore();
      key = `contract-${name}-${process.pid}-${Date.now()}-${n++}`;
    });
    afterEach(async () => {
      await store.close();
    });

    it('issues a code for a fresh key with no previous record', async () => {
      const result = await store.issue(key, A, T0, policy);
      expect(result).toEqual({
        status: 'issued',
        previous: null,
        record: { hash: A, sentAt: T0, expiresAt: T0 + policy.ttlMs, attempts: 0, to: key },
      });
    });

    it('blocks a second issue within the cooldown with the time left, and keeps the first code', async () => {
      await store.issue(key, A, T0, policy);
      expect(await store.issue(key, B, T0 + 15_000, policy)).toEqual({ status: 'blocked', retryAfterMs: 45_000 });
      expect((await store.verify(key, A, T0 + 16_000, policy)).outcome).toBe('ok');
    });

    it('replaces the code after the cooldown: the old one no longer matches, the new one does', async () => {
      const first = await store.issue(key, A, T0, policy);
      const second = await store.issue(key, B, T0 + policy.cooldownMs, policy);
      expect(second).toMatchObject({ status: 'issued', previous: first.status === 'issued' ? first.record : null });
      expect((await store.verify(key, A, T0 + 61_000, policy)).outcome).toBe('invalid');
      expect((await store.verify(key, B, T0 + 62_000, policy)).outcome).toBe('ok');
    });

    it('accepts a code once: a second correct verify is invalid', async () => {
      await store.issue(key, A, T0, policy);
      expect((await store.verify(key, A, T0 + 1000, policy)).outcome).toBe('ok');
      expect((await store.verify(key, A, T0 + 2000, policy)).outcome).toBe('invalid');
    });

    it('answers invalid to a wrong code and still accepts the right one afterwards', async () => {
      await store.issue(key, A, T0, policy);
      expect((await store.verify(key, WRONG, T0 + 1000, policy)).outcome).toBe('invalid');
      expect((await store.verify(key, A, T0 + 2000, policy)).outcome).toBe('ok');
    });

    it('answers invalid for a key that has no record', async () => {
      expect((await store.verify(key, A, T0, policy)).outcome).toBe('invalid');
    });

    it('answers too_many_attempts on the last allowed wrong guess and then to the right code too (burned)', async () => {
      await store.issue(key, A, T0, policy);
      for (let i = 1; i < policy.maxAttempts; i++)
        expect((await store.verify(key, WRONG, T0 + i, policy)).outcome).toBe('invalid');
      expect((await store.verify(key, WRONG, T0 + 10, policy)).outcome).toBe('too_many_attempts');
      expect((await store.verify(key, A, T0 + 11, policy)).outcome).toBe('too_many_attempts');
    });

    it('keeps the cooldown of a burned code: the next send waits as if the code were still pending', async () => {
      await store.issue(key, A, T0, policy);
      for (let i = 0; i < policy.maxAttempts; i++) await store.verify(key, WRONG, T0 + i, policy);
      expect(await store.issue(key, B, T0 + 1000, policy)).toEqual({
        status: 'blocked',
        retryAfterMs: policy.cooldownMs - 1000,
      });
      expect(await store.issue(key, B, T0 + policy.cooldownMs, policy)).toMatchObject({ status: 'issued' });
    });

    it('gives the successor of a burned code one guess: the right code works, a wrong one burns it again', async () => {
      await store.issue(key, A, T0, policy);
      for (let i = 0; i < policy.maxAttempts; i++) await store.verify(key, WRONG, T0 + i, policy);
      await store.issue(key, B, T0 + policy.cooldownMs, policy);
      expect((await store.verify(key, B, T0 + policy.cooldownMs + 1, policy)).outcome).toBe('ok');
      await store.issue(key, A, T0 + 2 * policy.cooldownMs, policy);
      for (let i = 0; i < policy.maxAttempts; i++)
        await store.verify(key, WRONG, T0 + 2 * policy.cooldownMs + i, policy);
      await store.issue(key, B, T0 + 3 * policy.cooldownMs, policy);
      expect((await store.verify(key, WRONG, T0 + 3 * policy.cooldownMs + 1, policy)).outcome).toBe(
        'too_many_attempts',
      );
      expect((await store.verify(key, B, T0 + 3 * policy.cooldownMs + 2, policy)).outcome).toBe('too_many_attempts');
    });

    it('remembers where the code went and when it was issued, and says so when it is accepted', async () => {
      await store.issue(key, A, T0, policy, '+393331234567 anna@example.com');
      expect(await store.verify(key, A, T0 + 1, policy)).toEqual({
        outcome: 'ok',
        to: '+393331234567 anna@example.com',
        sentAt: T0,
      });
      await store.issue(key, B, T0 + 2, policy);
      expect(await store.verify(key, B, T0 + 3, policy)).toEqual({ outcome: 'ok', to: key, sentAt: T0 + 2 });
    });

    it('carries wrong guesses over a resend within the code lifetime', async () => {
      await store.issue(key, A, T0, policy);
      for (let i = 0; i < 3; i++) await store.verify(key, WRONG, T0 + i, policy);
      await store.issue(key, B, T0 + policy.cooldownMs, policy);
      expect((await store.verify(key, WRONG, T0 + 61_000, policy)).outcome).toBe('invalid');
      expect((await store.verify(key, WRONG, T0 + 62_000, policy)).outcome).toBe('too_many_attempts');
    });

    it('keeps the journey that asked for the code over a resend within its lifetime, and names it to every verification', async () => {
      const [first, second] = ['AAECAwQFBgcICQoL', 'DA0ODxAREhMUFRYX'];
      await store.issue(key, A, T0, policy, key, first);
      expect(await store.verify(key, WRONG, T0 + 1, policy)).toEqual({ outcome: 'invalid', journey: first });
      // A resend names a new journey (the request could not know its own): the live code's stays.
      const resent = await store.issue(key, B, T0 + policy.cooldownMs, policy, key, second);
      expect(resent.status === 'issued' && resent.record.journey).toBe(first);
      expect(await store.verify(key, B, T0 + policy.cooldownMs + 1, policy)).toEqual({
        outcome: 'ok',
        to: key,
        sentAt: T0 + policy.cooldownMs,
        journey: first,
      });
      // Once the code is gone, the next one is the next journey's.
      await store.issue(key, A, T0 + policy.cooldownMs * 2, policy, key, second);
      expect(await store.verify(key, A, T0 + policy.cooldownMs * 2 + 1, policy)).toMatchObject({
        outcome: 'ok',
        journey: second,
      });
      await store.issue(key, B, T0 + policy.cooldownMs * 3, policy, key, first);
      expect(await store.verify(key, A, T0 + policy.cooldownMs * 3 + policy.ttlMs, policy)).toEqual({
        outcome: 'expired',
        journey: first,
      });
    });

    it("names the live code's journey to an early resend (refused by the cooldown) and to journeyOf, never an expired one", async () => {
      const [first, second] = ['AAECAwQFBgcICQoL', 'DA0ODxAREhMUFRYX'];
      expect(await store.journeyOf(key, T0)).toBeUndefined();
      await store.issue(key, A, T0, policy, key, first);
      expect(await store.issue(key, B, T0 + 1, policy, key, second)).toEqual({
        status: 'blocked',
        retryAfterMs: policy.cooldownMs - 1,
        journey: first,
      });
      expect(await store.journeyOf(key, T0 + 1)).toBe(first);
      expect(await store.journeyOf(key, T0 + policy.ttlMs)).toBeUndefined();
    });

    it('starts a fresh count when the code is resent after it expired', async () => {
      await store.issue(key, A, T0, policy);
      for (let i = 0; i < 4; i++) await store.verify(key, WRONG, T0 + i, policy);
      await store.issue(key, B, T0 + policy.ttlMs, policy);
      expect((await store.verify(key, WRONG, T0 + policy.ttlMs + 1, policy)).outcome).toBe('invalid');
      expect((await store.verify(key, B, T0 + policy.ttlMs + 2, policy)).outcome).toBe('ok');
    });

    it('answers expired after the lifetime, also to the right code, and keeps answering expired', async () => {
      await store.issue(key, A, T0, policy);
      expect((await store.verify(key, A, T0 + policy.ttlMs, policy)).outcome).toBe('expired');
      expect((await store.verify(key, WRONG, T0 + policy.ttlMs + 1000, policy)).outcome).toBe('expired');
    });

    it('does not count guesses against an expired code', async () => {
      await store.issue(key, A, T0, policy);
      for (let i = 0; i < 10; i++)
        expect((await store.verify(key, WRONG, T0 + policy.ttlMs + i, policy)).outcome).toBe('expired');
    });

    it('lets an expired code no longer block, even with a cooldown longer than the lifetime', async () => {
      const long = { ...policy, cooldownMs: policy.ttlMs * 2 };
      await store.issue(key, A, T0, long);
      expect(await store.issue(key, B, T0 + policy.ttlMs, long)).toMatchObject({ status: 'issued' });
    });

    it('keeps keys apart', async () => {
      await store.issue(key, A, T0, policy);
      expect(await store.issue(`${key}-other`, A, T0, policy)).toMatchObject({ status: 'issued', previous: null });
      expect((await store.verify(`${key}-other`, A, T0 + 1, policy)).outcome).toBe('ok');
      expect((await store.verify(key, A, T0 + 2, policy)).outcome).toBe('ok');
    });

    describe('revert (every channel refused the code)', () => {
      it('deletes a code that replaced nothing, so the key may be issued again at once', async () => {
        await store.issue(key, A, T0, policy);
        expect(await store.revert(key, A, null)).toBe(true);
        expect((await store.verify(key, A, T0 + 1, policy)).outcome).toBe('invalid');
        expect(await store.issue(key, B, T0 + 2, policy)).toMatchObject({ status: 'issued', previous: null });
      });

      it('restores the replaced code and charges no cooldown', async () => {
        await store.issue(key, A, T0, policy);
        const second = await store.issue(key, B, T0 + policy.cooldownMs, policy);
        expect(await store.revert(key, B, second.status === 'issued' ? second.previous : null)).toBe(true);
        // The restored code was sent at T0: its cooldown is long over.
        expect(await store.issue(key, h('code-c'), T0 + policy.cooldownMs + 1, policy)).toMatchObject({
          status: 'issued',
          previous: { hash: A },
        });
      });

      it('restores the replaced code so it verifies again', async () => {
        await store.issue(key, A, T0, policy);
        const second = await store.issue(key, B, T0 + policy.cooldownMs, policy);
        await store.revert(key, B, second.status === 'issued' ? second.previous : null);
        expect((await store.verify(key, A, T0 + policy.cooldownMs + 1, policy)).outcome).toBe('ok');
      });

      it('keeps the wrong guesses made before and during the failed send', async () => {
        await store.issue(key, A, T0, policy);
        for (let i = 0; i < 2; i++) await store.verify(key, WRONG, T0 + i, policy);
        const second = await store.issue(key, B, T0 + policy.cooldownMs, policy);
        await store.verify(key, WRONG, T0 + policy.cooldownMs + 1, policy);
        await store.revert(key, B, second.status === 'issued' ? second.previous : null);
        expect((await store.verify(key, WRONG, T0 + policy.cooldownMs + 2, policy)).outcome).toBe('invalid');
        expect((await store.verify(key, WRONG, T0 + policy.cooldownMs + 3, policy)).outcome).toBe('too_many_attempts');
      });

      it('leaves a newer code alone', async () => {
        await store.issue(key, B, T0, policy);
        expect(await store.revert(key, A, null)).toBe(false);
        expect((await store.verify(key, B, T0 + 1, policy)).outcome).toBe('ok');
      });
    });

    describe('concurrency', () => {
      it('issues exactly one of 20 concurrent codes for one fresh key', async () => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.issue(key, h(`c${i}`), T0, policy)),
        );
        expect(results.filter((r) => r.status === 'issued')).toHaveLength(1);
        expect(results.filter((r) => r.status === 'blocked')).toHaveLength(19);
      });

      it('accepts exactly one of 20 concurrent correct verifications', async () => {
        await store.issue(key, A, T0, policy);
        const outcomes = (
          await Promise.all(Array.from({ length: 20 }, () => store.verify(key, A, T0 + 1, policy)))
        ).map((r) => r.outcome);
        expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
        expect(outcomes.filter((o) => o === 'invalid')).toHaveLength(19);
      });

      it('counts every one of many concurrent wrong guesses', async () => {
        await store.issue(key, A, T0, policy);
        const outcomes = (
          await Promise.all(Array.from({ length: 8 }, () => store.verify(key, WRONG, T0 + 1, policy)))
        ).map((r) => r.outcome);
        expect(outcomes.filter((o) => o === 'invalid')).toHaveLength(policy.maxAttempts - 1);
        expect(outcomes.filter((o) => o === 'too_many_attempts')).toHaveLength(8 - (policy.maxAttempts - 1));
        expect((await store.verify(key, A, T0 + 2, policy)).outcome).toBe('too_many_attempts');
      });
    });

    describe('recipient cooldowns', () => {
      const address = () => `+39333${String(n).padStart(7, '0')}-${key}`;

      it('holds an address for the cooldown against another token, and says for how long', async () => {
        const to = address();
        expect(await store.claimRecipient(to, 'first', 60_000)).toEqual({ claimed: true });
        const second = await store.claimRecipient(to, 'second', 60_000);
        expect(second.claimed).toBe(false);
        expect(second.claimed === false && second.retryAfterMs).toBeGreaterThan(55_000);
      });

      it('gives an address back only to the token that holds it', async () => {
        const to = address();
        await store.claimRecipient(to, 'first', 60_000);
        await store.releaseRecipient(to, 'someone-else');
        expect((await store.claimRecipient(to, 'second', 60_000)).claimed).toBe(false);
        await store.releaseRecipient(to, 'first');
        expect((await store.claimRecipient(to, 'second', 60_000)).claimed).toBe(true);
      });

      it('frees an address whose code was accepted', async () => {
        const to = address();
        await store.claimRecipient(to, 'first', 60_000);
        await store.clearRecipient(to);
        expect((await store.claimRecipient(to, 'second', 60_000)).claimed).toBe(true);
      });

      it('frees an address by itself when the cooldown is over', async () => {
        const to = address();
        await store.claimRecipient(to, 'first', 50);
        await wait(150);
        expect((await store.claimRecipient(to, 'second', 60_000)).claimed).toBe(true);
      });

      it('lets exactly one of 20 concurrent sends claim one address', async () => {
        const to = address();
        const claims = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.claimRecipient(to, `t${i}`, 60_000)),
        );
        expect(claims.filter((c) => c.claimed)).toHaveLength(1);
      });
    });

    describe('account claims', () => {
      it('remembers when an account was claimed, and forgets it after the proof lifetime', async () => {
        expect(await store.accountClaimedAt(`uid-${key}`)).toBeNull();
        await store.markAccountClaimed(`uid-${key}`, T0, 60_000);
        expect(await store.accountClaimedAt(`uid-${key}`)).toBe(T0);
        await store.markAccountClaimed(`uid-short-${key}`, T0, 50);
        await wait(150);
        expect(await store.accountClaimedAt(`uid-short-${key}`)).toBeNull();
      });
    });

    describe('held phones', () => {
      it('holds a phone for an account both ways, and forgets it after its time', async () => {
        const uid = `uid-${key}`;
        expect(await store.heldPhoneOf(uid)).toBeNull();
        await store.holdPhone(uid, `phone-1-${key}`, 60_000);
        expect(await store.heldPhoneOf(uid)).toBe(`phone-1-${key}`);
        expect(await store.phoneHeldFor(`phone-1-${key}`)).toBe(uid);
        await store.holdPhone(`short-${uid}`, `phone-2-${key}`, 50);
        await wait(150);
        expect(await store.heldPhoneOf(`short-${uid}`)).toBeNull();
        expect(await store.phoneHeldFor(`phone-2-${key}`)).toBeNull();
      });

      it('releases both directions, but not a phone held again for another account meanwhile', async () => {
        const phone = `phone-3-${key}`;
        await store.holdPhone(`a-${key}`, phone, 60_000);
        await store.releasePhone(`a-${key}`);
        expect(await store.heldPhoneOf(`a-${key}`)).toBeNull();
        expect(await store.phoneHeldFor(phone)).toBeNull();
        await store.holdPhone(`b-${key}`, phone, 60_000);
        await store.holdPhone(`c-${key}`, phone, 60_000);
        await store.releasePhone(`b-${key}`);
        expect(await store.phoneHeldFor(phone)).toBe(`c-${key}`);
        await store.releasePhone(`nobody-${key}`);
        expect(await store.heldPhoneOf(`c-${key}`)).toBe(phone);
      });
    });

    describe('spent proofs', () => {
      const until = () => Date.now() + 60_000;

      it('spends a proof id once: a replay is refused', async () => {
        expect(await store.spendProof(`jti-${key}`, until())).toBe(true);
        expect(await store.spendProof(`jti-${key}`, until())).toBe(false);
      });

      it('gives a proof back when the change it authorised did not happen', async () => {
        await store.spendProof(`jti-${key}`, until());
        await store.unspendProof(`jti-${key}`);
        expect(await store.spendProof(`jti-${key}`, until())).toBe(true);
      });

      it('lets exactly one of 20 concurrent uses spend one proof', async () => {
        const spent = await Promise.all(Array.from({ length: 20 }, () => store.spendProof(`jti-${key}`, until())));
        expect(spent.filter(Boolean)).toHaveLength(1);
      });
    });

    it('answers ping', async () => {
      expect(await store.ping()).toBe(true);
    });
  });
}
