import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedDatabase, postgresDatabase, type Database } from '../../../src/core/database';
import { MIGRATIONS, migrate } from '../../../src/core/database/migrations';
import { createCredentialStore, type StoredCredential } from '../../../src/domain/passkeys/store';
import { startPostgresServer, type PostgresServer } from '../../support/postgres-server';

/*
 * One contract for the credential store, run on a real PostgreSQL server and on PGlite: the same
 * SQL and migrations must behave alike on both, including across a restart.
 */

interface Backend {
  /** Opens the database (the same one each time: a restart reopens what was there). */
  open(): Promise<Database>;
  /** Between two opens: the server restarted, or nothing. */
  restart(): Promise<void>;
  done(): Promise<void>;
}

const credential = (over: Partial<StoredCredential> = {}): StoredCredential => ({
  id: 'cred-1',
  publicKey: new Uint8Array([1, 2, 3, 250]),
  counter: 0,
  transports: ['internal', 'hybrid'],
  deviceType: 'multiDevice',
  backedUp: true,
  aaguid: 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd',
  userHandle: 'handle-a',
  uid: 'u-1',
  name: 'Passkey',
  createdAt: Date.UTC(2026, 10, 28, 12, 0, 0, 123),
  lastUsedAt: null,
  ...over,
});

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'PGlite in a data folder',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lfa-pglite-'));
      return {
        open: () => embeddedDatabase(dir),
        restart: async () => {},
        done: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const server: PostgresServer = await startPostgresServer();
      return {
        open: async () => postgresDatabase(server.url),
        restart: async () => {
          await server.stop();
          await server.start();
        },
        done: () => server.destroy(),
      };
    },
  ],
];

describe.each(backends)('credential store on %s', (_name, make) => {
  let backend: Backend;
  let db: Database;
  beforeAll(async () => {
    backend = await make();
    db = await backend.open();
  }, 60_000);
  afterAll(async () => {
    await db.close();
    await backend.done();
  });

  it('applies the migrations once: a second run, and two at once, apply nothing and harm nothing', async () => {
    expect(await migrate(db)).toEqual(MIGRATIONS.map((m) => m.id));
    expect(await migrate(db)).toEqual([]);
    const [a, b] = await Promise.all([migrate(db), migrate(db)]);
    expect([...a, ...b]).toEqual([]);
    const rows = await db.query<{ id: number }>('select id from schema_migrations order by id');
    expect(rows.map((r) => Number(r.id))).toEqual(MIGRATIONS.map((m) => m.id));
  });

  it('keeps every field of a credential, and finds it by id and by uid', async () => {
    const store = createCredentialStore(db);
    await store.insert(credential());
    await store.insert(credential({ id: 'cred-2', uid: 'u-2', userHandle: 'handle-b', transports: [] }));
    expect(await store.get('cred-1')).toEqual(credential());
    expect(await store.get('nope')).toBeNull();
    expect((await store.listByUid('u-1')).map((c) => c.id)).toEqual(['cred-1']);
    expect(await store.userHandleOf('u-2')).toBe('handle-b');
    expect(await store.userHandleOf('u-3')).toBeNull();
  });

  it('keeps a credential once: a second with the same id, or two at once, insert one and keep the first', async () => {
    const store = createCredentialStore(db);
    expect(await store.insert(credential({ name: 'Other' }))).toBe(false);
    expect(await store.get('cred-1')).toEqual(credential());
    const twice = credential({ id: 'cred-twice', uid: 'u-twice' });
    const inserted = await Promise.all([store.insert(twice), store.insert(twice)]);
    expect(inserted.sort()).toEqual([false, true]);
  });

  it('moves the counter only from the value it was read at', async () => {
    const store = createCredentialStore(db);
    const used = Date.UTC(2026, 10, 28, 13, 0, 0);
    expect(await store.recordUse('cred-1', 0, 4_000_000_000, false, used)).toBe(true);
    // A second instance that read the old counter loses.
    expect(await store.recordUse('cred-1', 0, 1, false, used)).toBe(false);
    expect(await store.get('cred-1')).toMatchObject({ counter: 4_000_000_000, backedUp: false, lastUsedAt: used });
  });

  it('renames and deletes only the owner’s credential', async () => {
    const store = createCredentialStore(db);
    expect(await store.rename('u-2', 'cred-1', 'Stolen')).toBe(false);
    expect(await store.rename('u-1', 'cred-1', 'Telefono')).toBe(true);
    expect(await store.delete('u-2', 'cred-1')).toBe(false);
    expect((await store.get('cred-1'))?.name).toBe('Telefono');
  });

  it('keeps the credentials across a restart', async () => {
    await db.close();
    await backend.restart();
    db = await backend.open();
    expect(await migrate(db)).toEqual([]);
    const store = createCredentialStore(db);
    expect(await store.get('cred-1')).toMatchObject({ name: 'Telefono', counter: 4_000_000_000 });
    expect(await store.deleteAll('u-1')).toBe(1);
    expect(await store.get('cred-1')).toBeNull();
  });
});

describe('the in-memory PGlite (tests)', () => {
  it('starts empty on every open', async () => {
    const first = await embeddedDatabase();
    await migrate(first);
    await createCredentialStore(first).insert(credential());
    await first.close();
    const second = await embeddedDatabase();
    await migrate(second);
    expect(await createCredentialStore(second).get('cred-1')).toBeNull();
    await second.close();
    // Two PGlite starts (an initdb each, 8 to 13 s apiece on a loaded 2-core machine): a budget, not a measurement.
  }, 90_000);
});
