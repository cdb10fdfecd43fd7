import pino from 'pino';
import request from 'supertest';
import { embeddedDatabase, type Database } from '../../../src/core/database';
import type { Deps } from '../../../src/domain/deps';
import { createMemoryOtpStore } from '../../../src/domain/otp/memory-store';
import { signProof } from '../../../src/domain/proofs';
import { startSandbox, type Sandbox } from '../../../src/sandbox';
import { sandboxSeedUsers } from '../../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../../support/app';
import { SoftAuthenticator } from '../../support/soft-authenticator';

/*
 * Passkeys end to end through the real app on the sandbox (docs/passkeys.md): a code login,
 * an enrolment with its proof, then logins by passkey through a second instance on the same
 * database and the same code store, with real WebAuthn payloads from a software authenticator;
 * and every abuse the ceremonies must refuse.
 */

const mario = sandboxSeedUsers[0]!;
const MARIO_PHONE = '+393331234567';
const ORIGIN = 'http://localhost:8080';
const PASSKEYS = { enabled: true, rp_id: 'localhost', origins: [ORIGIN] };
const INTERNAL_KEY = 'operator-key-operator-key-operator-key';

describe('passkeys', () => {
  let sandbox: Sandbox;
  let db: Database;
  let a: Deps;
  let b: Deps;
  let serverA: ReturnType<ReturnType<typeof testApp>['callback']>;
  let serverB: typeof serverA;

  beforeAll(async () => {
    db = await embeddedDatabase();
    sandbox = await startSandbox(
      testConfig({ passkeys: PASSKEYS, security: { internal_key: INTERNAL_KEY } }),
      pino({ level: 'silent' }),
    );
    // Two instances: one database, one code store (where challenges are spent), as a fleet shares them.
    const otpStore = createMemoryOtpStore({ maxRecords: 10_000, now: Date.now });
    a = testDeps(sandbox.config, { database: db, otpStore });
    b = testDeps(sandbox.config, { database: db, otpStore });
    serverA = testApp(a).callback();
    serverB = testApp(b).callback();
  }, 120_000);
  afterAll(async () => {
    await a.close();
    await b.close();
    await sandbox.close();
    await db.close();
  });

  const call = (server: typeof serverA, action: string, body: object) =>
    request(server).post(`/?action=${action}`).send(body);
  const smsCount = () => sandbox.outbox.list('sms').length;
  const ingested = (uid: string) =>
    sandbox.outbox
      .list('collector')
      .filter((m) => m.to === uid)
      .map((m) => JSON.parse(m.body) as Record<string, unknown>);

  /** A phone login by SMS code through instance A: the answer at 90. */
  async function codeLogin(): Promise<{ uid: string; proof: string }> {
    await call(serverA, 'FeLogin', { identifier: MARIO_PHONE });
    const code = sandbox.outbox.list('sms').find((m) => m.to.includes(MARIO_PHONE))?.code;
    const done = await call(serverA, 'FeVerifyOtp', { flow: 'phone', phone: MARIO_PHONE, otp_code: code });
    expect(done.body.data).toMatchObject({ next_step: 90, uid: mario.uid, proof: expect.any(String) });
    return { uid: done.body.data.uid, proof: done.body.data.proof };
  }

  async function enrolled(auth: SoftAuthenticator, proof: string) {
    const asked = await call(serverA, 'PasskeyEnrolOptions', { proof });
    const credential = auth.register(asked.body.data.options);
    return call(serverA, 'PasskeyEnrol', { proof, passkey_proof: asked.body.data.passkey_proof, credential });
  }

  const loginOptions = async (server = serverB) => (await call(server, 'PasskeyLoginOptions', {})).body.data;

  const auth = new SoftAuthenticator(ORIGIN);
  let login: { uid: string; proof: string };

  it('enrols a passkey with the proof of a fresh code login: a random handle, a resident key and user verification required', async () => {
    login = await codeLogin();
    const asked = await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof });
    const { options } = asked.body.data;
    expect(options).toMatchObject({
      rp: { id: 'localhost' },
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      excludeCredentials: [],
      attestation: 'none',
    });
    // The handle names nobody: not the uid, the phone or the email.
    const handle = Buffer.from(options.user.id, 'base64url').toString('utf8');
    for (const id of [mario.uid, MARIO_PHONE, '393331234567', mario.email]) expect(handle).not.toContain(String(id));
    const credential = auth.register(options);
    const kept = await call(serverA, 'PasskeyEnrol', {
      proof: login.proof,
      passkey_proof: asked.body.data.passkey_proof,
      credential,
      name: 'Telefono',
    });
    expect(kept.body.data).toEqual({
      passkey: {
        id: credential.id,
        name: 'Telefono',
        device_type: 'singleDevice',
        backed_up: false,
        created_at: expect.any(String),
        last_used_at: null,
      },
    });
    const stored = await (await a.passkeys.store()).get(credential.id);
    expect(stored).toMatchObject({ uid: mario.uid, userHandle: options.user.id, counter: 0 });
    // The next enrolment of the account excludes it, under the same handle.
    const again = (await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof })).body.data.options;
    expect(again.excludeCredentials).toEqual([{ id: credential.id, type: 'public-key', transports: ['internal'] }]);
    expect(again.user.id).toBe(options.user.id);
  });

  it('logs in by passkey through another instance as a code does at 90, with no SMS: token, cookie, collector told the method', async () => {
    const sent = smsCount();
    const { options } = await loginOptions();
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [] });
    const answer = await call(serverB, 'PasskeyLogin', {
      passkey_proof: (await loginOptions()).passkey_proof,
      credential: auth.assert(options),
    });
    // The assertion answers the first options' challenge: refused, the counter unmoved.
    expect(answer.body.data).toMatchObject({ reason: 'passkey_refused', why: 'challenge' });
    const fresh = await loginOptions();
    const done = await call(serverB, 'PasskeyLogin', {
      passkey_proof: fresh.passkey_proof,
      credential: auth.assert(fresh.options),
      stay_logged_in: true,
    });
    expect(done.body.data).toMatchObject({
      next_step: 90,
      screen: 'success',
      done: true,
      uid: mario.uid,
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    expect(String(done.headers['set-cookie'])).toContain(`__utp=${done.body.data.access_token}`);
    await b.loginIngest.drain(2000);
    // The outbox lists the newest first.
    expect(ingested(mario.uid)[0]).toMatchObject({ uid: mario.uid, method: 'passkey' });
    // A code login's ingest names no method: as before passkeys.
    expect(ingested(mario.uid).at(-1)).not.toHaveProperty('method');
    expect(smsCount()).toBe(sent);
    // Prometheus counts logins by method: the code login on A, the passkey's on B (the SMS it saved).
    expect(await a.metrics.render()).toContain('lfa_logins_total{method="code"} 1');
    expect(await a.metrics.render()).toContain('lfa_logins_total{method="passkey"} 0');
    expect(await b.metrics.render()).toContain('lfa_logins_total{method="passkey"} 1');
    expect(await b.metrics.render()).toContain('lfa_logins_total{method="code"} 0');
    expect((await (await b.passkeys.store()).get(auth.credentials[0]!.id.toString('base64url')))?.lastUsedAt).toEqual(
      expect.any(Number),
    );
    // The proof it answers opens what the proof at 90 opens: the identity primitives, and the journey's next actions.
    expect((await call(serverB, 'get_user', { uid: mario.uid, proof: done.body.data.proof })).body.meta.exists).toBe(
      true,
    );
    const profile = await call(serverB, 'FeUpdateProfile', {
      uid: mario.uid,
      city: 'Torino',
      proof: done.body.data.proof,
    });
    expect(profile.body.data).toMatchObject({ next_step: 90, done: true, uid: mario.uid });
  });

  it('refuses a replayed assertion and a challenge used twice, on either instance', async () => {
    const { options, passkey_proof } = await loginOptions(serverA);
    const credential = auth.assert(options);
    expect((await call(serverA, 'PasskeyLogin', { passkey_proof, credential })).body.data.uid).toBe(mario.uid);
    const replayed = await call(serverB, 'PasskeyLogin', { passkey_proof, credential });
    expect(replayed.body.data).toMatchObject({ reason: 'passkey_challenge_invalid', why: 'used' });
    // The same assertion under a new challenge: its signature is over the old one.
    const other = await loginOptions();
    const moved = await call(serverB, 'PasskeyLogin', { passkey_proof: other.passkey_proof, credential });
    expect(moved.body.data).toMatchObject({ reason: 'passkey_refused', why: 'challenge' });
  });

  it('refuses an enrolment challenge used twice', async () => {
    const asked = (await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof })).body.data;
    const spare = new SoftAuthenticator(ORIGIN);
    const first = await call(serverA, 'PasskeyEnrol', {
      proof: login.proof,
      passkey_proof: asked.passkey_proof,
      credential: spare.register(asked.options),
    });
    expect(first.body.data.passkey).toBeDefined();
    const second = await call(serverB, 'PasskeyEnrol', {
      proof: login.proof,
      passkey_proof: asked.passkey_proof,
      credential: spare.register(asked.options),
    });
    expect(second.body.data).toMatchObject({ reason: 'passkey_challenge_invalid', why: 'used' });
  });

  it('enrols one credential sent twice at once, through two instances, once: the other is already_registered', async () => {
    const [one, two] = await Promise.all([
      call(serverA, 'PasskeyEnrolOptions', { proof: login.proof }),
      call(serverA, 'PasskeyEnrolOptions', { proof: login.proof }),
    ]);
    const twin = new SoftAuthenticator(ORIGIN);
    const first = twin.register(one.body.data.options);
    const again = twin.register(two.body.data.options, {}, twin.credentials[0]);
    expect(again.id).toBe(first.id);
    const answers = await Promise.all([
      call(serverA, 'PasskeyEnrol', {
        proof: login.proof,
        passkey_proof: one.body.data.passkey_proof,
        credential: first,
      }),
      call(serverB, 'PasskeyEnrol', {
        proof: login.proof,
        passkey_proof: two.body.data.passkey_proof,
        credential: again,
      }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    const data = answers.map((r) => r.body.data);
    expect(data.filter((d) => d.passkey?.id === first.id)).toHaveLength(1);
    expect(data.filter((d) => d.reason === 'passkey_refused' && d.why === 'already_registered')).toHaveLength(1);
    expect((await (await a.passkeys.store()).listByUid(mario.uid)).filter((c) => c.id === first.id)).toHaveLength(1);
  });

  it.each([
    ['a foreign origin', { origin: 'https://evil.example' }, 'origin'],
    ['another relying party id', { rpId: 'evil.example' }, 'rp_id'],
    ['no user verification', { userVerified: false }, 'user_verification'],
    ['a registration answer', { type: 'webauthn.create' }, 'type'],
  ])('refuses an assertion with %s', async (_what, bend, why) => {
    const { options, passkey_proof } = await loginOptions();
    const refused = await call(serverB, 'PasskeyLogin', { passkey_proof, credential: auth.assert(options, bend) });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_refused', why });
  });

  it.each([
    ['a foreign origin', { origin: 'https://evil.example' }, 'origin'],
    ['another relying party id', { rpId: 'evil.example' }, 'rp_id'],
    ['no user verification', { userVerified: false }, 'user_verification'],
  ])('refuses an enrolment with %s, and keeps nothing', async (_what, bend, why) => {
    const asked = (await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof })).body.data;
    const other = new SoftAuthenticator(ORIGIN);
    const credential = other.register(asked.options, bend);
    const refused = await call(serverA, 'PasskeyEnrol', {
      proof: login.proof,
      passkey_proof: asked.passkey_proof,
      credential,
    });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_refused', why });
    expect(await (await a.passkeys.store()).get(credential.id)).toBeNull();
  });

  it('refuses a counter that goes back (a cloned authenticator), and keeps the counter where it was', async () => {
    const store = await b.passkeys.store();
    const id = auth.credentials[0]!.id.toString('base64url');
    const before = (await store.get(id))!.counter;
    expect(before).toBeGreaterThan(1);
    const { options, passkey_proof } = await loginOptions();
    const refused = await call(serverB, 'PasskeyLogin', {
      passkey_proof,
      credential: auth.assert(options, { counter: before - 1 }),
    });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_refused', why: 'counter' });
    expect((await store.get(id))!.counter).toBe(before);
  });

  it('accepts a synced passkey whose counter stays 0, every time', async () => {
    const synced = new SoftAuthenticator(ORIGIN, false);
    expect((await enrolled(synced, login.proof)).body.data.passkey).toMatchObject({
      device_type: 'multiDevice',
      backed_up: true,
    });
    for (let i = 0; i < 2; i += 1) {
      const { options, passkey_proof } = await loginOptions();
      const done = await call(serverB, 'PasskeyLogin', { passkey_proof, credential: synced.assert(options) });
      expect(done.body.data.uid).toBe(mario.uid);
    }
  });

  it('answers a deleted credential clearly, naming it so the page can tell the browser', async () => {
    const gone = new SoftAuthenticator(ORIGIN);
    const kept = await enrolled(gone, login.proof);
    const id = kept.body.data.passkey.id;
    expect(await (await a.passkeys.store()).delete(mario.uid, id)).toBe(true);
    const { options, passkey_proof } = await loginOptions();
    const refused = await call(serverB, 'PasskeyLogin', { passkey_proof, credential: gone.assert(options) });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_unknown', credential_id: id });
  });

  it("refuses to enrol with someone else's proof, a proof that is no login's, or none", async () => {
    const asked = (await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof })).body.data;
    const intruder = new SoftAuthenticator(ORIGIN);
    const credential = intruder.register(asked.options);
    // Another person's fresh login proof, with the passkey proof of Mario's options: not the login that asked.
    const theirs = signProof(a.proofKey, { kind: 'verified', uid: 'someone-else' }, 900, Date.now());
    const swapped = await call(serverA, 'PasskeyEnrol', {
      proof: theirs,
      passkey_proof: asked.passkey_proof,
      credential,
    });
    expect(swapped.body.data).toMatchObject({ reason: 'passkey_challenge_invalid', why: 'mismatch' });
    // Another login of Mario's own (another proof chain) is another login too.
    const later = { proof: signProof(a.proofKey, { kind: 'verified', uid: mario.uid }, 900, Date.now()) };
    const other = await call(serverA, 'PasskeyEnrol', {
      proof: later.proof,
      passkey_proof: asked.passkey_proof,
      credential,
    });
    expect(other.body.data).toMatchObject({ reason: 'passkey_challenge_invalid', why: 'mismatch' });
    const pending = signProof(a.proofKey, { kind: 'pending', uid: mario.uid }, 900, Date.now());
    expect((await call(serverA, 'PasskeyEnrolOptions', { proof: pending })).body.data).toMatchObject({
      reason: 'invalid_proof',
    });
    expect((await call(serverA, 'PasskeyEnrolOptions', {})).body.data.reason).toBe('proof_required');
    const forged = signProof('another-secret', { kind: 'verified', uid: mario.uid }, 900, Date.now());
    expect((await call(serverA, 'PasskeyEnrolOptions', { proof: forged })).body.data.reason).toBe('invalid_proof');
    expect(await (await a.passkeys.store()).get(credential.id)).toBeNull();
  });

  it('refuses a forged or expired passkey proof', async () => {
    const { options } = await loginOptions();
    const forged = signProof(
      'another-secret',
      { kind: 'passkey_login', challenge: options.challenge },
      300,
      Date.now(),
    );
    const refused = await call(serverB, 'PasskeyLogin', { passkey_proof: forged, credential: auth.assert(options) });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_challenge_invalid', why: 'signature' });
    const old = signProof(
      b.proofKey,
      { kind: 'passkey_login', challenge: options.challenge },
      300,
      Date.now() - 301_000,
    );
    const expired = await call(serverB, 'PasskeyLogin', { passkey_proof: old, credential: auth.assert(options) });
    expect(expired.body.data).toMatchObject({ reason: 'passkey_challenge_invalid', why: 'expired' });
  });

  it('holds back a passkey named too often, whoever sends the tries, and not the others', async () => {
    const config = {
      ...sandbox.config,
      rate_limits: { ...sandbox.config.rate_limits, passkey_logins_per_credential_per_hour: 2 },
    };
    const c = testDeps(config, { database: db });
    const serverC = testApp(c).callback();
    try {
      const hammered = new SoftAuthenticator(ORIGIN);
      await enrolled(hammered, login.proof);
      const attempt = async (who: SoftAuthenticator) => {
        const { options, passkey_proof } = (await call(serverC, 'PasskeyLoginOptions', {})).body.data;
        return (await call(serverC, 'PasskeyLogin', { passkey_proof, credential: who.assert(options) })).body.data;
      };
      expect((await attempt(hammered)).uid).toBe(mario.uid);
      expect((await attempt(hammered)).uid).toBe(mario.uid);
      expect(await attempt(hammered)).toMatchObject({
        reason: 'rate_limited',
        limit: 'passkey_logins_per_credential_per_hour',
      });
      expect((await attempt(auth)).uid).toBe(mario.uid);
    } finally {
      await c.close();
    }
  });

  it('lists, renames and deletes the passkeys of the account a login proved, and nobody else’s', async () => {
    const theirs = signProof(a.proofKey, { kind: 'verified', uid: 'someone-else' }, 900, Date.now());
    const listed = (await call(serverA, 'PasskeyList', { proof: login.proof })).body.data.passkeys;
    const id = auth.credentials[0]!.id.toString('base64url');
    expect(listed.map((p: { id: string }) => p.id)).toContain(id);
    expect(listed[0]).toEqual({
      id,
      name: 'Telefono',
      created_at: expect.any(String),
      last_used_at: expect.any(String),
      device_type: 'singleDevice',
      backed_up: false,
    });
    expect((await call(serverA, 'PasskeyList', { proof: theirs })).body.data.passkeys).toEqual([]);
    expect((await call(serverA, 'PasskeyList', {})).body.data.reason).toBe('proof_required');

    const stolen = await call(serverA, 'PasskeyRename', { proof: theirs, id, name: 'Mio' });
    expect(stolen.body.data).toMatchObject({ reason: 'passkey_unknown', credential_id: id });
    // Refused and nothing changed: the owner still sees the name it had.
    const after = (await call(serverA, 'PasskeyList', { proof: login.proof })).body.data.passkeys;
    expect(after.find((p: { id: string }) => p.id === id)).toMatchObject({ name: 'Telefono' });
    const renamed = await call(serverA, 'PasskeyRename', { proof: login.proof, id, name: 'Pixel' });
    expect(renamed.body.data.passkey).toMatchObject({ id, name: 'Pixel' });

    expect((await call(serverA, 'PasskeyDelete', { proof: theirs, id })).body.data.reason).toBe('passkey_unknown');
    expect((await call(serverA, 'PasskeyDelete', { id })).body.data.reason).toBe('proof_required');
    expect((await call(serverA, 'PasskeyDelete', { proof: login.proof, id })).body.data).toEqual({ deleted: true });
    const { options, passkey_proof } = await loginOptions();
    const refused = await call(serverB, 'PasskeyLogin', { passkey_proof, credential: auth.assert(options) });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_unknown', credential_id: id });
  });

  it('lets an operator, and only an operator, revoke every passkey of a uid', async () => {
    const left = (await call(serverA, 'PasskeyList', { proof: login.proof })).body.data.passkeys.length;
    expect(left).toBeGreaterThan(0);
    // The account's own proof is not an operator's key.
    const own = await call(serverA, 'PasskeyRevoke', { uid: mario.uid, proof: login.proof });
    expect(own.body.data.reason).toBe('proof_required');
    const revoked = await request(serverA)
      .post('/?action=PasskeyRevoke')
      .set('x-internal-key', INTERNAL_KEY)
      .send({ uid: mario.uid });
    expect(revoked.body.data).toEqual({ revoked: left });
    expect((await call(serverA, 'PasskeyList', { proof: login.proof })).body.data.passkeys).toEqual([]);
  });

  it('erases a uid’s passkeys by the operator’s revoke: nothing of them is left, none logs in, and a second revoke finds none', async () => {
    // The service has no erasure of its own (docs/passkeys.md, "Erasing a uid"): the revoke is the erase.
    const asked = (await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof })).body.data;
    const kept = new SoftAuthenticator(ORIGIN);
    await call(serverA, 'PasskeyEnrol', {
      proof: login.proof,
      passkey_proof: asked.passkey_proof,
      credential: kept.register(asked.options),
    });
    const erase = () =>
      request(serverB).post('/?action=PasskeyRevoke').set('x-internal-key', INTERNAL_KEY).send({ uid: mario.uid });
    expect((await erase()).body.data).toEqual({ revoked: 1 });
    const store = await a.passkeys.store();
    expect(await store.listByUid(mario.uid)).toEqual([]);
    // The account's random user handle went with its last passkey: a later enrolment gets a new one.
    expect(await store.userHandleOf(mario.uid)).toBeNull();
    const [row] = await db.query<{ n: string }>('select count(*)::text as n from passkey_credentials where uid = $1', [
      mario.uid,
    ]);
    expect(Number(row!.n)).toBe(0);
    const { options, passkey_proof } = await loginOptions();
    const refused = await call(serverB, 'PasskeyLogin', { passkey_proof, credential: kept.assert(options) });
    expect(refused.body.data).toMatchObject({ reason: 'passkey_unknown' });
    expect((await erase()).body.data).toEqual({ revoked: 0 });
    const again = (await call(serverA, 'PasskeyEnrolOptions', { proof: login.proof })).body.data.options;
    expect(again.user.id).not.toBe(asked.options.user.id);
  });
});

describe('passkeys off (the default)', () => {
  it('answers passkeys_disabled to every passkey action, and opens no database', async () => {
    const deps = testDeps(testConfig());
    const server = testApp(deps).callback();
    for (const action of [
      'PasskeyEnrolOptions',
      'PasskeyEnrol',
      'PasskeyLoginOptions',
      'PasskeyLogin',
      'PasskeyList',
      'PasskeyRename',
      'PasskeyDelete',
      'PasskeyRevoke',
    ]) {
      const answer = await request(server).post(`/?action=${action}`).send({});
      // Validation first (as every action), then the switch.
      expect(['passkeys_disabled', 'invalid_request']).toContain(answer.body.data.reason);
    }
    const options = await request(server).post('/?action=PasskeyLoginOptions').send({});
    expect(options.body.data.reason).toBe('passkeys_disabled');
    await deps.close();
  });
});
