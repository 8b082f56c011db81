/**
 * Any drizzle PostgreSQL handle, whichever driver opened it and whatever schema it was given: what the PostgreSQL
 * search (src/modules/seeds/search-pg.ts) takes, so it runs on client.ts's `PgDb` (Bun.sql) and on postgres.js alike
 * (test/seeds-pg.test.ts uses both). It builds every query with drizzle's query builder, whose results are typed from
 * the tables named, not from the handle.
 */
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

// biome-ignore lint: any schema.
export type AnyPgDb = PgDatabase<PgQueryResultHKT, any>;
