import { PGlite } from '@electric-sql/pglite';
import { Pool } from 'pg';
import type { Config } from '../config/schema';
import type { Logger } from '../logger';

/*
 * The durable store (docs/passkeys.md): PostgreSQL through `pg` when `database.url` is set, else
 * PGlite, PostgreSQL compiled to WebAssembly and run in process, in `database.embedded_dir` or
 * in memory. Both speak the same SQL, so the stores above this module and the migrations are
 * written once; this interface is the little both have in common.
 */

/** What runs SQL: the whole database, or one session of it (`Database.session`). */
interface Sql {
  /** One statement with `$1`-style parameters; its rows. */
  query<R extends Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** A script of several statements without parameters (a migration). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Sql {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `work` on one connection: what a session holds (an advisory lock, a transaction) stays its own. */
  session<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function postgresDatabase(url: string, options: { poolSize?: number; log?: Logger } = {}): Database {
  const pool = new Pool({ connectionString: url, max: options.poolSize ?? 5 });
  // An idle connection the server dropped must not take the process down; the next query reconnects.
  pool.on('error', (err) => options.log?.warn({ err: err.message }, 'database: idle connection lost'));
  const over = (client: Pick<Pool, 'query'>): Sql => ({
    query: async <R extends Record<string, unknown>>(sql: string, params: readonly unknown[] = []) =>
      (await client.query(sql, params as unknown[])).rows as R[],
    exec: async (sql) => void (await client.query(sql)),
  });
  return {
    kind: 'postgres',
    ...over(pool),
    async session(work) {
      const client = await pool.connect();
      try {
        return await work(over(client));
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** PGlite in `dir` (created when missing), or in memory without one. */
export async function embeddedDatabase(dir?: string): Promise<Database> {
  const db = await PGlite.create(dir ? { dataDir: dir } : {});
  const sql: Sql = {
    query: async <R extends Record<string, unknown>>(text: string, params: readonly unknown[] = []) =>
      (await db.query<R>(text, params as unknown[])).rows,
    exec: async (text) => void (await db.exec(text)),
  };
  // One connection in process: every session is that one.
  return { kind: 'pglite', ...sql, session: (work) => work(sql), close: () => db.close() };
}

/** The configured database, opened (not yet migrated: `migrate`, ./migrations.ts). */
export async function openDatabase(config: Config, log?: Logger): Promise<Database> {
  const { url, embedded_dir: dir, pool_size: poolSize } = config.database;
  if (url) return postgresDatabase(url, { poolSize, log });
  return embeddedDatabase(dir || undefined);
}
