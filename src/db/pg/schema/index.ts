/**
 * Every PostgreSQL table, for drizzle's typed client and drizzle-kit (drizzle.pg.config.ts). Same files as
 * src/db/schema/. NB (merge): on the pgsearch branch this lists only what seeds need; the pg-core mirror of the other
 * tables (another branch) completes it.
 */
export * from "./accounts";
export * from "./seeds";
