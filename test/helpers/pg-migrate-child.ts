/**
 * One "replica starting": opens its own pool to the database URL given as argv[2], runs the PostgreSQL migrator and
 * prints `{"applied":[...]}` on stdout (test/pg-migrate.test.ts starts ten of these at once).
 */
import { openPostgres } from "../../src/db/pg/client";
import { migratePostgres } from "../../src/db/pg/migrate";

const url = process.argv[2];
if (!url) throw new Error("usage: bun test/helpers/pg-migrate-child.ts <postgres url>");
const client = openPostgres(url, { max: 2 });
try {
  const applied = await migratePostgres(client.sql);
  console.log(JSON.stringify({ applied }));
} finally {
  await client.close();
}
