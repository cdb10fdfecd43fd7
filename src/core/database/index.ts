import type { PGlite } from '@electric-sql/pglite';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Pool } from 'pg';
import { projectPath } from '../paths';
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

/**
 * PGlite's module, loaded when an embedded database is first opened: the database is opened only
 * with passkeys on, and the service and every test that builds it would otherwise load it for
 * nothing. A require, not import(): the build is CommonJS, and Jest runs CommonJS without its ESM loader.
 */
const pglite = () =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('@electric-sql/pglite') as typeof import('@electric-sql/pglite')).PGlite;

/*
 * A new PGlite cluster runs initdb in WebAssembly: about 6 s of CPU, where loading the files of a
 * cluster initdb made before takes 2 (measured, docs/passkeys.md). The test suite opens dozens, so
 * the first new cluster's files are kept as a tarball under node_modules/.cache, keyed by PGlite's
 * version, and every later new cluster (in memory, or a data folder not yet initialised) loads
 * them. Only initdb's output is kept, never a migration nor a row. A cache that cannot be read or
 * written (a read-only image) costs the initdb, nothing more.
 */
const PGLITE_MANIFEST = projectPath('node_modules', '@electric-sql', 'pglite', 'package.json');

/** Where the fresh cluster is kept, or undefined when PGlite's version cannot be read. */
export async function templatePath(): Promise<string | undefined> {
  try {
    const { version } = JSON.parse(await readFile(PGLITE_MANIFEST, 'utf8')) as { version?: string };
    return version ? projectPath('node_modules', '.cache', 'login-frontend-api', `pglite-${version}.tar`) : undefined;
  } catch {
    return undefined;
  }
}

/** The tarball of a fresh cluster, made on first use; undefined when no cache can be kept. */
async function freshCluster(): Promise<Blob | undefined> {
  const path = await templatePath();
  if (!path) return undefined;
  const kept = await readFile(path).catch(() => undefined);
  if (kept) return new Blob([kept]);
  const first = await pglite().create({});
  try {
    const tarball = await first.dumpDataDir('none');
    // Written whole, then renamed: a concurrent reader (another Jest worker) sees all of it or nothing.
    const partial = `${path}.${process.pid}.${Date.now()}`;
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(partial, Buffer.from(await tarball.arrayBuffer()));
    await rename(partial, path);
    return tarball;
  } catch {
    return undefined;
  } finally {
    await first.close();
  }
}

async function createPGlite(dir: string | undefined): Promise<PGlite> {
  // Only a folder that is missing or empty is a new cluster: anything else is PGlite's to open as it is.
  const existed = dir !== undefined && existsSync(dir);
  const fresh = dir === undefined || !existed || (await readdir(dir)).length === 0;
  const template = fresh ? await freshCluster() : undefined;
  if (template) {
    try {
      return await pglite().create({ ...(dir ? { dataDir: dir } : {}), loadDataDir: template });
    } catch {
      // A damaged tarball: dropped, and this cluster made by initdb as without one, in the folder as it was.
      const path = await templatePath();
      if (path) await rm(path, { force: true });
      if (dir) {
        await rm(dir, { recursive: true, force: true });
        if (existed) await mkdir(dir);
      }
    }
  }
  return pglite().create(dir ? { dataDir: dir } : {});
}

/** PGlite in `dir` (created when missing), or in memory without one. */
export async function embeddedDatabase(dir?: string): Promise<Database> {
  const db = await createPGlite(dir);
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
