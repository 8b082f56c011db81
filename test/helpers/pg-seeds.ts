/**
 * A migrated PostgreSQL database for the PostgreSQL search tests and bench: a fresh database on a test cluster
 * (test/helpers/postgres.ts), migrated by the real migrator (src/db/pg/migrate.ts: search's functions, migrations-pg/,
 * the auth triggers), opened through the app's client (src/db/pg/client.ts: Bun.sql and drizzle's bun-sql driver).
 */
import { openPostgres, type PgClient } from "../../src/db/pg/client";
import { migratePostgres } from "../../src/db/pg/migrate";
import type { Postgres } from "./postgres";

export interface SeedsDatabase extends PgClient {
  url: string;
}

/** Migrates the (empty) database at `url` and opens a client on it. */
export async function openSeedsDatabase(url: string, opts: { max?: number } = {}): Promise<SeedsDatabase> {
  const client = openPostgres(url, { max: opts.max ?? 4 });
  await migratePostgres(client.sql);
  return { ...client, url };
}

/** A fresh, migrated database on `pg`. */
export async function createSeedsDatabase(pg: Postgres): Promise<SeedsDatabase> {
  return openSeedsDatabase(await pg.createDatabase());
}
