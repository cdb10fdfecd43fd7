import type { Database } from './index';

/*
 * The schema, as numbered migrations applied in order, each once, recorded in
 * `schema_migrations`. Every instance runs `migrate` at start (and `npm run migrate` runs it
 * alone): the advisory lock lets one instance apply them while the others wait, then find them
 * applied. A migration is never edited once released; a change is a new one.
 */

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'passkey_credentials',
    sql: `
      create table passkey_credentials (
        id text primary key,
        public_key bytea not null,
        counter bigint not null default 0,
        transports text[] not null default '{}',
        device_type text not null,
        backed_up boolean not null,
        aaguid text not null,
        user_handle text not null,
        uid text not null,
        name text not null,
        created_at timestamptz not null,
        last_used_at timestamptz
      );
      create index passkey_credentials_uid on passkey_credentials (uid);
    `,
  },
];

/** The key of the advisory lock migrations hold: any constant the service uses for nothing else. */
const MIGRATION_LOCK = 7_746_101;

/** Applies the migrations not yet applied, under the advisory lock; the ids it applied. */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return db.session(async (sql) => {
    await sql.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await sql.exec(
        'create table if not exists schema_migrations (id integer primary key, name text not null, applied_at timestamptz not null default now())',
      );
      const done = new Set(
        (await sql.query<{ id: number }>('select id from schema_migrations')).map((row) => Number(row.id)),
      );
      const applied: number[] = [];
      for (const migration of [...migrations].sort((a, b) => a.id - b.id)) {
        if (done.has(migration.id)) continue;
        // A migration and its record commit together: one that fails leaves nothing half applied.
        await sql.exec('begin');
        try {
          await sql.exec(migration.sql);
          await sql.query('insert into schema_migrations (id, name) values ($1, $2)', [migration.id, migration.name]);
          await sql.exec('commit');
        } catch (err) {
          await sql.exec('rollback');
          throw err;
        }
        applied.push(migration.id);
      }
      return applied;
    } finally {
      await sql.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
}
