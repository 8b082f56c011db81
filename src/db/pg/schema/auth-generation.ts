/**
 * The auth generation counter (no file of this name in src/db/schema: on SQLite src/db/auth-triggers.ts creates the
 * table with its triggers). One row, bumped by the triggers of src/db/pg/auth-triggers.ts whenever anything that decides
 * whether a key works changes; a cached key lookup is trusted only while the counter is unchanged. Declared here so
 * drizzle-kit generates the table and the storage layer reads it typed; the row and the triggers are that module's.
 */
import { sql } from "drizzle-orm";
import { bigint, check, pgTable } from "drizzle-orm/pg-core";

export const authGeneration = pgTable(
  "auth_generation",
  {
    id: bigint("id", { mode: "number" }).primaryKey(),
    n: bigint("n", { mode: "number" }).notNull(),
  },
  (t) => [check("auth_generation_single_row", sql`${t.id} = 1`)],
);
