import { readFile, writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedDatabase, templatePath } from '../../../src/core/database';

// PGlite starts take seconds apiece on a loaded machine: budgets, not measurements.
const SLOW = 120_000;

describe('a new embedded cluster from the kept template', () => {
  it(
    'is a fresh cluster each time: nothing one database wrote is in the next',
    async () => {
      const first = await embeddedDatabase();
      await first.exec('create table kept_by_first (n int); insert into kept_by_first values (1)');
      await first.close();
      // The template exists once a new cluster was made, and holds initdb's output only.
      const path = (await templatePath())!;
      expect((await readFile(path)).length).toBeGreaterThan(0);
      const second = await embeddedDatabase();
      expect(await second.query("select to_regclass('kept_by_first') as t")).toEqual([{ t: null }]);
      await second.close();
    },
    SLOW,
  );

  it(
    'drops a damaged template and makes the cluster by initdb instead',
    async () => {
      const path = (await templatePath())!;
      await writeFile(path, 'not a tarball');
      const db = await embeddedDatabase();
      expect(await db.query('select 1 as one')).toEqual([{ one: 1 }]);
      await db.close();
      // Gone, or written again whole by another opening: never the damaged one.
      expect(await readFile(path, 'utf8').catch(() => 'gone')).not.toBe('not a tarball');
    },
    SLOW,
  );

  it(
    'loads into a data folder that is empty, which then opens as the cluster it is',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lfa-pglite-empty-'));
      try {
        const db = await embeddedDatabase(dir);
        await db.exec('create table t (n int); insert into t values (7)');
        await db.close();
        const again = await embeddedDatabase(dir);
        expect(await again.query('select n from t')).toEqual([{ n: 7 }]);
        await again.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    SLOW,
  );
});
