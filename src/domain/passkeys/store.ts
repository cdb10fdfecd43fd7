import type { Database } from '../../core/database';

/*
 * The passkeys' credentials, one row each in `passkey_credentials` (src/core/database/migrations.ts),
 * on PostgreSQL or PGlite alike. Times are the service's clock (`now`), passed in, so a test's
 * clock is the store's too.
 */

export interface StoredCredential {
  /** The credential id, base64url, as the browser reports it. */
  id: string;
  /** COSE public key, as @simplewebauthn/server returned it at enrolment. */
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  /** `singleDevice` or `multiDevice` (a synced passkey). */
  deviceType: string;
  backedUp: boolean;
  aaguid: string;
  /** The random handle of the account (never its uid, phone or email). */
  userHandle: string;
  uid: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface CredentialStore {
  /**
   * Keeps a new credential; false when one with its id is already kept (the check and the write
   * are one statement, so two enrolments of one credential at once cannot both insert).
   */
  insert(credential: StoredCredential): Promise<boolean>;
  get(id: string): Promise<StoredCredential | null>;
  listByUid(uid: string): Promise<StoredCredential[]>;
  /** The handle the account's passkeys already carry, or null before its first. */
  userHandleOf(uid: string): Promise<string | null>;
  /**
   * Moves the counter from `expected` to `counter` and records the use, only if nobody moved it
   * meanwhile (two instances verifying one assertion): false when the row changed or is gone.
   */
  recordUse(id: string, expected: number, counter: number, backedUp: boolean, at: number): Promise<boolean>;
  rename(uid: string, id: string, name: string): Promise<boolean>;
  delete(uid: string, id: string): Promise<boolean>;
  /** Every passkey of the account (an operator's revoke, an erased uid); how many. */
  deleteAll(uid: string): Promise<number>;
}

type Row = Record<string, unknown>;

const COLUMNS = `id, public_key, counter::text as counter, transports, device_type, backed_up, aaguid, user_handle, uid, name,
  (extract(epoch from created_at) * 1000)::float8 as created_ms, (extract(epoch from last_used_at) * 1000)::float8 as last_used_ms`;

const fromRow = (row: Row): StoredCredential => ({
  id: String(row.id),
  // pg answers a Buffer, PGlite a Uint8Array: one type above this line.
  publicKey: new Uint8Array(row.public_key as Uint8Array),
  counter: Number(row.counter),
  transports: (row.transports as string[] | null) ?? [],
  deviceType: String(row.device_type),
  backedUp: row.backed_up === true,
  aaguid: String(row.aaguid),
  userHandle: String(row.user_handle),
  uid: String(row.uid),
  name: String(row.name),
  createdAt: Math.round(Number(row.created_ms)),
  lastUsedAt: row.last_used_ms === null ? null : Math.round(Number(row.last_used_ms)),
});

const at = (ms: number) => new Date(ms).toISOString();

export function createCredentialStore(db: Database): CredentialStore {
  return {
    async insert(c) {
      const rows = await db.query(
        `insert into passkey_credentials (id, public_key, counter, transports, device_type, backed_up, aaguid, user_handle, uid, name, created_at, last_used_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         on conflict (id) do nothing returning id`,
        [
          c.id,
          c.publicKey,
          c.counter,
          c.transports,
          c.deviceType,
          c.backedUp,
          c.aaguid,
          c.userHandle,
          c.uid,
          c.name,
          at(c.createdAt),
          c.lastUsedAt === null ? null : at(c.lastUsedAt),
        ],
      );
      return rows.length === 1;
    },
    async get(id) {
      const [row] = await db.query(`select ${COLUMNS} from passkey_credentials where id = $1`, [id]);
      return row ? fromRow(row) : null;
    },
    async listByUid(uid) {
      const rows = await db.query(`select ${COLUMNS} from passkey_credentials where uid = $1 order by created_at, id`, [
        uid,
      ]);
      return rows.map(fromRow);
    },
    async userHandleOf(uid) {
      const [row] = await db.query<{ user_handle: string }>(
        'select user_handle from passkey_credentials where uid = $1 order by created_at limit 1',
        [uid],
      );
      return row ? row.user_handle : null;
    },
    async recordUse(id, expected, counter, backedUp, when) {
      const rows = await db.query(
        `update passkey_credentials set counter = $3, backed_up = $4, last_used_at = $5
         where id = $1 and counter = $2 returning id`,
        [id, expected, counter, backedUp, at(when)],
      );
      return rows.length === 1;
    },
    async rename(uid, id, name) {
      const rows = await db.query('update passkey_credentials set name = $3 where uid = $1 and id = $2 returning id', [
        uid,
        id,
        name,
      ]);
      return rows.length === 1;
    },
    async delete(uid, id) {
      const rows = await db.query('delete from passkey_credentials where uid = $1 and id = $2 returning id', [uid, id]);
      return rows.length === 1;
    },
    async deleteAll(uid) {
      const rows = await db.query('delete from passkey_credentials where uid = $1 returning id', [uid]);
      return rows.length;
    },
  };
}
