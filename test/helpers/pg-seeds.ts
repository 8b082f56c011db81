/**
 * A PostgreSQL database holding the seeds tables, for the PostgreSQL search tests and bench: PG_PRE_MIGRATIONS
 * (src/db/pg/fts.ts: unaccent and the search functions), then the DDL drizzle-kit generates for src/db/pg/schema (the
 * same statements `drizzle-kit generate` writes to migrations-pg/, computed here through drizzle-kit's API so that
 * this branch carries no migration of its own), then a drizzle handle over postgres.js.
 *
 * NB (merge): once the PostgreSQL migrator lands, `createSeedsDatabase` should run it instead of generating the DDL.
 */
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { PG_PRE_MIGRATIONS } from "../../src/db/pg/fts";
import * as pgSchema from "../../src/db/pg/schema";
import type { Postgres } from "./postgres";

export type PgSeedsDb = PostgresJsDatabase<typeof pgSchema>;

const BREAKPOINT = "--> statement-breakpoint";

/** The CREATE statements of src/db/pg/schema, as drizzle-kit writes them for an empty database. */
export async function schemaStatements(): Promise<string[]> {
  const { generateDrizzleJson, generateMigration } = await import("drizzle-kit/api");
  return generateMigration(generateDrizzleJson({}), generateDrizzleJson(pgSchema));
}

export interface SeedsDatabase {
  url: string;
  db: PgSeedsDb;
  client: postgres.Sql;
  /** Every notice PostgreSQL sent since the schema was created (a search should send none: clients may log them). */
  notices: string[];
  close(): Promise<void>;
}

/** Migrates the database at `url` (pre-migrations, then the schema) and opens a drizzle handle on it. */
export async function openSeedsDatabase(url: string, opts: { max?: number } = {}): Promise<SeedsDatabase> {
  const notices: string[] = [];
  // NB: kept, not printed (postgres.js prints them by default).
  const client = postgres(url, { max: opts.max ?? 4, onnotice: (notice) => notices.push(String(notice.message)) });
  for (const migration of PG_PRE_MIGRATIONS) {
    for (const statement of migration.sql.split(BREAKPOINT)) if (statement.trim()) await client.unsafe(statement);
  }
  for (const statement of await schemaStatements()) await client.unsafe(statement);
  notices.length = 0;
  const db = drizzle(client, { schema: pgSchema });
  return { url, db, client, notices, close: () => client.end({ timeout: 5 }) };
}

/** A fresh database on `pg` with the seeds tables. */
export async function createSeedsDatabase(pg: Postgres): Promise<SeedsDatabase> {
  return openSeedsDatabase(await pg.createDatabase());
}
