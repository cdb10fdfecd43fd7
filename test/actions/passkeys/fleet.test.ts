import pino from 'pino';
import request from 'supertest';
import { postgresDatabase, type Database } from '../../../src/core/database';
import type { Deps } from '../../../src/domain/deps';
import { createMemoryOtpStore } from '../../../src/domain/otp/memory-store';
import { signProof } from '../../../src/domain/proofs';
import { startSandbox, type Sandbox } from '../../../src/sandbox';
import { sandboxSeedUsers } from '../../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../../support/app';
import { startPostgresServer, type PostgresServer } from '../../support/postgres-server';
import { SoftAuthenticator } from '../../support/soft-authenticator';

/*
 * Passkeys on a fleet with PostgreSQL (docs/passkeys.md): two instances, each with its own
 * connections to one real server, migrate it at once on their first use (the advisory lock lets
 * one apply, the other find it done); a passkey enrolled through one logs in through the other,
 * and through a third after the database server restarted.
 */

const mario = sandboxSeedUsers[0]!;
const ORIGIN = 'http://localhost:8080';

describe('passkeys on PostgreSQL, across instances and a restart', () => {
  let server: PostgresServer;
  let sandbox: Sandbox;
  const opened: Database[] = [];
  const instances: Deps[] = [];
  const otpStore = createMemoryOtpStore({ maxRecords: 1000, now: Date.now });

  beforeAll(async () => {
    server = await startPostgresServer();
    sandbox = await startSandbox(
      testConfig({ passkeys: { enabled: true, rp_id: 'localhost', origins: [ORIGIN] } }),
      pino({ level: 'silent' }),
    );
  }, 60_000);
  afterAll(async () => {
    for (const deps of instances) await deps.close();
    for (const db of opened) await db.close();
    await sandbox?.close();
    await server?.destroy();
  });

  /** One instance of the service: its own connections to the one database, the fleet's code store. */
  function instance() {
    const db = postgresDatabase(server.url);
    opened.push(db);
    const deps = testDeps(sandbox.config, { database: db, otpStore });
    instances.push(deps);
    const app = testApp(deps).callback();
    return { deps, call: (action: string, body: object) => request(app).post(`/?action=${action}`).send(body) };
  }

  const auth = new SoftAuthenticator(ORIGIN);

  async function logsIn(node: ReturnType<typeof instance>) {
    const { options, passkey_proof } = (await node.call('PasskeyLoginOptions', {})).body.data;
    return (await node.call('PasskeyLogin', { passkey_proof, credential: auth.assert(options) })).body.data;
  }

  it('migrates once from two instances at once, enrols through one and logs in through the other', async () => {
    const a = instance();
    const b = instance();
    await Promise.all([a.deps.passkeys.store(), b.deps.passkeys.store()]);
    const [migrations] = await opened[0]!.query<{ n: string }>('select count(*)::text as n from schema_migrations');
    expect(Number(migrations!.n)).toBe(1);

    const proof = signProof(a.deps.proofKey, { kind: 'verified', uid: mario.uid, email: mario.email }, 900, Date.now());
    const asked = (await a.call('PasskeyEnrolOptions', { proof })).body.data;
    const kept = await a.call('PasskeyEnrol', {
      proof,
      passkey_proof: asked.passkey_proof,
      credential: auth.register(asked.options),
    });
    expect(kept.body.data.passkey.id).toEqual(expect.any(String));
    expect(await logsIn(b)).toMatchObject({ next_step: 90, uid: mario.uid, access_token: expect.any(String) });
  });

  it('enrols one credential sent twice at once, through two instances, once: the other is already_registered', async () => {
    const a = instance();
    const b = instance();
    const proof = signProof(a.deps.proofKey, { kind: 'verified', uid: mario.uid, email: mario.email }, 900, Date.now());
    const [one, two] = await Promise.all([
      a.call('PasskeyEnrolOptions', { proof }),
      b.call('PasskeyEnrolOptions', { proof }),
    ]);
    const twin = new SoftAuthenticator(ORIGIN);
    const first = twin.register(one.body.data.options);
    const again = twin.register(two.body.data.options, {}, twin.credentials[0]);
    const answers = await Promise.all([
      a.call('PasskeyEnrol', { proof, passkey_proof: one.body.data.passkey_proof, credential: first }),
      b.call('PasskeyEnrol', { proof, passkey_proof: two.body.data.passkey_proof, credential: again }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    const data = answers.map((r) => r.body.data);
    expect(data.filter((d) => d.passkey?.id === first.id)).toHaveLength(1);
    expect(data.filter((d) => d.reason === 'passkey_refused' && d.why === 'already_registered')).toHaveLength(1);
    const [kept] = await opened[0]!.query<{ n: string }>(
      'select count(*)::text as n from passkey_credentials where id = $1',
      [first.id],
    );
    expect(Number(kept!.n)).toBe(1);
  });

  it('keeps the passkey and its counter across a restart of the database server', async () => {
    for (const deps of instances.splice(0)) await deps.close();
    for (const db of opened.splice(0)) await db.close();
    await server.stop();
    await server.start();
    const c = instance();
    const stored = await (await c.deps.passkeys.store()).get(auth.credentials[0]!.id.toString('base64url'));
    expect(stored).toMatchObject({ uid: mario.uid, counter: 1 });
    expect(await logsIn(c)).toMatchObject({ next_step: 90, uid: mario.uid });
    // A clone that kept the old counter is refused after the restart too.
    const { options, passkey_proof } = (await c.call('PasskeyLoginOptions', {})).body.data;
    const cloned = await c.call('PasskeyLogin', { passkey_proof, credential: auth.assert(options, { counter: 1 }) });
    expect(cloned.body.data).toMatchObject({ reason: 'passkey_refused', why: 'counter' });
  });
});
