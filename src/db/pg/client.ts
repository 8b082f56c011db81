/**
 * Opens PostgreSQL through Bun.sql (Bun's built-in client) and drizzle's `bun-sql` driver: measured against
 * postgres.js in bench/pg-driver.ts, and why it is the pick, in docs/choices.md ("PostgreSQL data layer (issue 15)").
 * The store (store.ts) runs on it in PostgreSQL mode.
 */
import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import * as schema from "./schema";

export type PgDb = ReturnType<typeof drizzle<typeof schema, SQL>>;

export interface PgClient {
  /** The Bun.sql pool (advisory locks and LISTEN need one of its connections: `sql.reserve()`). */
  sql: SQL;
  db: PgDb;
  close(): Promise<void>;
}

/** Opens a pool of at most `max` connections to `url` (postgres://…); nothing connects until the first query. */
export function openPostgres(url: string, options: { max?: number } = {}): PgClient {
  const client = new SQL({ url, max: options.max ?? 10 });
  const db = drizzle({ client, schema });
  return { sql: client, db, close: () => client.close() };
}
