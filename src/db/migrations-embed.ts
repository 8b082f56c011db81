/**
 * Bundle-time macro: reads a drizzle-kit migrations folder and returns its SQL as data, so the compiled binary
 * carries its migrations inside it. Imported with `with { type: "macro" }`; it never runs inside the binary.
 * `migrations/` is SQLite's (drizzle.config.ts), `migrations-pg/` PostgreSQL's (drizzle.pg.config.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface EmbeddedMigration {
  tag: string;
  sql: string;
}

/** Returns the migrations listed in `<folder>/meta/_journal.json`, in order (folder: a literal, macro arguments are). */
export function embeddedMigrations(folder: "migrations" | "migrations-pg" = "migrations"): EmbeddedMigration[] {
  const dir = join(import.meta.dir, "..", "..", folder);
  const journal = JSON.parse(readFileSync(join(dir, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return journal.entries.map((e) => ({ tag: e.tag, sql: readFileSync(join(dir, `${e.tag}.sql`), "utf8") }));
}
