import { createActor, transition } from 'xstate';
import { otpRecordMachine, sameDigest, type OtpPolicy, type OtpRecord } from '../../machines/otp-record.machine';

const policy: OtpPolicy = { ttlMs: 300_000, cooldownMs: 60_000, maxAttempts: 5 };
const RIGHT = 'aa'.repeat(32);
const WRONG = 'bb'.repeat(32);
const OTHER = 'cc'.repeat(32);

/** An actor with recording effects and a fake clock that only moves when the test says so. */
function record() {
  const effects: Array<{ type: string; record: OtpRecord | null }> = [];
  const effect =
    (type: string) =>
    ({ context }: { context: { record: OtpRecord | null } }) => {
      effects.push({ type, record: context.record && { ...context.record } });
    };
  const machine = otpRecordMachine.provide({
    actions: {
      storeCode: effect('storeCode'),
      countWrongGuess: effect('countWrongGuess'),
      deleteRecord: effect('deleteRecord'),
      restorePrevious: effect('restorePrevious'),
    },
  });
  const actor = createActor(machine).start();
  let now = 1_700_000_000_000;
  return {
    actor,
    effects,
    tick: (ms: number) => (now += ms),
    generate: (hash = RIGHT) => actor.send({ type: 'GENERATE', now, hash, to: '+393331234567', policy }),
    verify: (hash: string) => actor.send({ type: 'VERIFY', now, hash, policy }),
    get now() {
      return now;
    },
    get state() {
      return actor.getSnapshot();
    },
  };
}

describe('OTP record machine', () => {
  it('starts in none with no record', () => {
    const r = record();
    expect(r.state.value).toBe('none');
    expect(r.state.context.record).toBeNull();
  });

  it('stores a new code on GENERATE from none, with a lifetime of ttl and no wrong guesses', () => {
    const r = record();
    r.generate();
    expect(r.state.value).toBe('valid');
    expect(r.state.context.outcome).toBe('issued');
    expect(r.effects).toEqual([
      {
        type: 'storeCode',
        record: { hash: RIGHT, sentAt: r.now, expiresAt: r.now + 300_000, attempts: 0, to: '+393331234567' },
      },
    ]);
  });

  it('blocks a GENERATE within the cooldown, reports the time left and stores nothing', () => {
    const r = record();
    r.generate();
    r.tick(20_000);
    r.generate(OTHER);
    expect(r.state.value).toBe('valid');
    expect(r.state.context.outcome).toBe('blocked');
    expect(r.state.context.retryAfterMs).toBe(40_000);
    expect(r.state.context.record?.hash).toBe(RIGHT);
    expect(r.effects.map((e) => e.type)).toEqual(['storeCode']);
  });

  it('replaces the code on GENERATE after the cooldown and keeps the replaced record as previous', () => {
    const r = record();
    r.generate();
    const first = r.state.context.record;
    r.tick(60_000);
    r.generate(OTHER);
    expect(r.state.context.outcome).toBe('issued');
    expect(r.state.context.record?.hash).toBe(OTHER);
    expect(r.state.context.previous).toEqual(first);
  });

  it('carries the wrong-guess count over a resend within the code lifetime', () => {
    const r = record();
    r.generate();
    r.verify(WRONG);
    r.verify(WRONG);
    r.tick(61_000);
    r.generate(OTHER);
    expect(r.state.context.record).toMatchObject({ hash: OTHER, attempts: 2 });
  });

  it('starts a fresh count when the replaced code had already expired', () => {
    const r = record();
    r.generate();
    r.verify(WRONG);
    r.tick(300_000);
    r.generate(OTHER);
    expect(r.state.context.record).toMatchObject({ hash: OTHER, attempts: 0 });
  });

  it('deletes the record on a matching VERIFY (one-shot) and ends in deleted', () => {
    const r = record();
    r.generate();
    r.tick(10_000);
    r.verify(RIGHT);
    expect(r.state.value).toBe('deleted');
    expect(r.state.status).toBe('done');
    expect(r.state.context.outcome).toBe('ok');
    expect(r.effects.map((e) => e.type)).toEqual(['storeCode', 'deleteRecord']);
  });

  it('counts a wrong guess and stays valid', () => {
    const r = record();
    r.generate();
    r.verify(WRONG);
    expect(r.state.value).toBe('valid');
    expect(r.state.context.outcome).toBe('invalid');
    expect(r.effects.at(-1)).toEqual({ type: 'countWrongGuess', record: expect.objectContaining({ attempts: 1 }) });
  });

  it('reports expired for a VERIFY at the expiry instant, even with the right code, and keeps the record', () => {
    const r = record();
    r.generate();
    r.tick(300_000);
    r.verify(RIGHT);
    expect(r.state.value).toBe('expired');
    expect(r.state.context.outcome).toBe('expired');
    expect(r.effects.map((e) => e.type)).toEqual(['storeCode']);
  });

  it('accepts the right code one millisecond before expiry', () => {
    const r = record();
    r.generate();
    r.tick(299_999);
    r.verify(RIGHT);
    expect(r.state.context.outcome).toBe('ok');
  });

  it('burns the code on the last allowed wrong guess: kept (with its cooldown), reports too_many_attempts, matches nothing', () => {
    const r = record();
    r.generate();
    for (let i = 0; i < 4; i++) r.verify(WRONG);
    expect(r.state.context.outcome).toBe('invalid');
    r.verify(WRONG);
    expect(r.state.value).toBe('valid');
    expect(r.state.context.outcome).toBe('too_many_attempts');
    expect(r.state.context.record?.attempts).toBe(5);
    expect(r.effects.at(-1)?.type).toBe('countWrongGuess');
    r.verify(RIGHT);
    expect(r.state.context.outcome).toBe('too_many_attempts');
    r.tick(1000);
    r.generate(OTHER);
    expect(r.state.context.outcome).toBe('blocked');
  });

  it('gives the successor of a burned code one guess after the cooldown', () => {
    const r = record();
    r.generate();
    for (let i = 0; i < 5; i++) r.verify(WRONG);
    r.tick(60_000);
    r.generate(OTHER);
    expect(r.state.context.outcome).toBe('issued');
    expect(r.state.context.record?.attempts).toBe(4);
    r.verify(OTHER);
    expect(r.state.context.outcome).toBe('ok');
  });

  it('still accepts the right code after max_attempts - 1 wrong guesses', () => {
    const r = record();
    r.generate();
    for (let i = 0; i < 4; i++) r.verify(WRONG);
    r.verify(RIGHT);
    expect(r.state.context.outcome).toBe('ok');
  });

  it('answers invalid to a VERIFY when there is no record', () => {
    const r = record();
    r.verify(RIGHT);
    expect(r.state.value).toBe('none');
    expect(r.state.context.outcome).toBe('invalid');
    expect(r.effects).toEqual([]);
  });

  describe('SEND_FAILED (every channel refused the new code)', () => {
    it('puts the previous record back, keeping the higher wrong-guess count', () => {
      const r = record();
      r.generate(RIGHT);
      r.verify(WRONG);
      r.tick(60_000);
      r.generate(OTHER);
      r.verify(WRONG);
      const previous = r.state.context.previous;
      r.actor.send({ type: 'SEND_FAILED', hash: OTHER, previous });
      expect(r.state.value).toBe('valid');
      expect(r.state.context.outcome).toBe('reverted');
      expect(r.state.context.record).toEqual({ ...previous, attempts: 2 });
      expect(r.effects.at(-1)).toEqual({ type: 'restorePrevious', record: { ...previous, attempts: 2 } });
    });

    it('deletes the record when the failed code replaced nothing', () => {
      const r = record();
      r.generate();
      r.actor.send({ type: 'SEND_FAILED', hash: RIGHT, previous: null });
      expect(r.state.value).toBe('none');
      expect(r.state.context.record).toBeNull();
      expect(r.effects.at(-1)?.type).toBe('deleteRecord');
    });

    it('keeps a newer code that took the failed one’s place', () => {
      const r = record();
      r.generate(OTHER);
      r.actor.send({ type: 'SEND_FAILED', hash: RIGHT, previous: null });
      expect(r.state.context.outcome).toBe('kept');
      expect(r.state.context.record?.hash).toBe(OTHER);
    });
  });

  it('computes a step purely: transition() returns the named effects without running them', () => {
    const snapshot = otpRecordMachine.resolveState({
      value: 'valid',
      context: {
        record: { hash: RIGHT, sentAt: 0, expiresAt: 1000, attempts: 0, to: '+393331234567' },
        previous: null,
        outcome: null,
        retryAfterMs: 0,
      },
    });
    const [next, actions] = transition(otpRecordMachine, snapshot, { type: 'VERIFY', now: 10, hash: RIGHT, policy });
    expect(next.value).toBe('deleted');
    expect(actions.map((a) => a.type)).toEqual(['deleteRecord']);
    expect(snapshot.context.record).not.toBeNull();
  });
});

describe('sameDigest', () => {
  it('is true for equal hex digests', () => {
    expect(sameDigest(RIGHT, RIGHT)).toBe(true);
  });

  it('is false for different digests, different lengths and empty input', () => {
    expect(sameDigest(RIGHT, WRONG)).toBe(false);
    expect(sameDigest(RIGHT, RIGHT.slice(0, 62))).toBe(false);
    expect(sameDigest('', '')).toBe(false);
  });
});
