import { configTree } from '../src/core/config/load';
import { configSchema } from '../src/core/config/schema';
import { embeddedDatabase, postgresDatabase } from '../src/core/database';
import { migrate } from '../src/core/database/migrations';

/*
 * `npm run migrate`: applies the durable store's migrations (src/core/database/migrations.ts) to
 * the configured database, as every instance does at start, under the same advisory lock. For a
 * deployment that migrates in a job of its own before the new instances start. Reads only
 * `database.*` (CONFIG_FILE, then the environment: DATABASE__URL), so the job needs no other key.
 */
async function main(): Promise<void> {
  const tree = configTree();
  const { url, embedded_dir: dir, pool_size: poolSize } = configSchema.shape.database.parse(tree.database ?? {});
  if (!url && !dir) {
    console.error('database.url and database.embedded_dir are both empty: nothing durable to migrate');
    process.exit(2);
  }
  const db = url ? postgresDatabase(url, { poolSize }) : await embeddedDatabase(dir);
  try {
    const applied = await migrate(db);
    console.log(
      applied.length > 0 ? `applied migrations ${applied.join(', ')} (${db.kind})` : `up to date (${db.kind})`,
    );
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  console.error(`migrate failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
