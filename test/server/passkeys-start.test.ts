import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { embeddedDatabase } from '../../src/core/database';
import { MIGRATIONS } from '../../src/core/database/migrations';
import { startService } from '../../src/service';
import { testConfig } from '../support/app';
import { freePort } from '../support/ports';

/*
 * With passkeys on, the service migrates its database before it listens, and does not start at
 * all when it cannot (docs/passkeys.md): no instance answers a passkey request on a database
 * it could not open or migrate.
 */

const silent = { log: pino({ level: 'silent' }), otpLog: pino({ level: 'silent' }) };
const config = (database: object) =>
  testConfig({
    sandbox: { enabled: false },
    server: { host: '127.0.0.1', port: 0 },
    passkeys: { enabled: true },
    database,
  });

describe('start-up with passkeys on', () => {
  it('migrates the embedded database in its folder before listening, and closes it on the way out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lfa-start-'));
    try {
      const service = await startService(config({ embedded_dir: dir }), silent);
      await service.close();
      // Closed, so the folder opens again here, migrated.
      const db = await embeddedDatabase(dir);
      const rows = await db.query<{ id: number }>('select id from schema_migrations order by id');
      expect(rows.map((r) => Number(r.id))).toEqual(MIGRATIONS.map((m) => m.id));
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses to start when the database cannot be reached', async () => {
    const port = await freePort();
    await expect(startService(config({ url: `postgres://lfa@127.0.0.1:${port}/lfa` }), silent)).rejects.toThrow(
      /ECONNREFUSED|connect/,
    );
  });
});
