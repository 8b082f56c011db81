import { defineConfig } from "drizzle-kit";

/** PostgreSQL's migrations (`drizzle-kit generate --config drizzle.pg.config.ts`); SQLite's are drizzle.config.ts. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/pg/schema/index.ts",
  out: "./migrations-pg",
});
