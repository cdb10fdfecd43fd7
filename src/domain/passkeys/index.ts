import type { Config } from '../../core/config/schema';
import { openDatabase, type Database } from '../../core/database';
import { migrate } from '../../core/database/migrations';
import type { Logger } from '../../core/logger';
import { createCredentialStore, type CredentialStore } from './store';

/*
 * The passkeys' durable store, opened once per process when passkeys are enabled: the database
 * of `database.*`, migrated before its first use (the service does it at start, so an instance
 * that cannot reach it or migrate it never starts serving).
 */
export interface Passkeys {
  readonly enabled: boolean;
  /** The credential store, the database opened and migrated on first call. */
  store(): Promise<CredentialStore>;
  close(): Promise<void>;
}

export function createPasskeys(config: Config, log: Logger, given?: Database): Passkeys {
  let opening: Promise<{ db: Database; store: CredentialStore }> | undefined;
  const open = () =>
    (opening ??= (async () => {
      const db = given ?? (await openDatabase(config, log));
      const applied = await migrate(db);
      if (applied.length > 0)
        log.info({ event: 'migrations_applied', ids: applied, database: db.kind }, 'database migrated');
      return { db, store: createCredentialStore(db) };
    })());
  return {
    enabled: config.passkeys.enabled,
    store: async () => (await open()).store,
    async close() {
      // A database a test handed in is the test's to close.
      if (!opening || given) return;
      const { db } = await opening.catch(() => ({ db: undefined }));
      await db?.close();
    },
  };
}
