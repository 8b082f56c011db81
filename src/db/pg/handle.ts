/**
 * The type of a drizzle PostgreSQL handle, whichever driver opened it (postgres.js or Bun.sql) and whatever schema it
 * was given: what PostgreSQL services take. NB (merge): the PostgreSQL client of the storage layer may name its own.
 */
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

// biome-ignore lint: any schema; the query builder types results from the tables named, not from the handle.
export type PgDb = PgDatabase<PgQueryResultHKT, any>;
