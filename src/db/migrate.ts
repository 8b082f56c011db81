/**
 * Applies the embedded migrations in order, each in its own transaction, recording them in `__seedcast_migrations`.
 * Runs at start before the first request, and from `seedcast migrate`.
 */
import type { Database } from "bun:sqlite";
import { AUTH_TRIGGER_MIGRATIONS } from "./auth-triggers";
import { FTS_MIGRATIONS } from "./fts";
import { embeddedMigrations } from "./migrations-embed" with { type: "macro" };

// NB: FTS (fts.ts) and the auth generation triggers (auth-triggers.ts) are DDL drizzle-kit cannot generate; they run after drizzle's.
const MIGRATIONS = [...embeddedMigrations(), ...FTS_MIGRATIONS, ...AUTH_TRIGGER_MIGRATIONS];
const BREAKPOINT = "--> statement-breakpoint";

/** Applies every migration not yet applied; returns the tags applied now. */
export function migrateDatabase(sqlite: Database): string[] {
  sqlite.exec(
    "CREATE TABLE IF NOT EXISTS __seedcast_migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
  );
  const done = new Set(
    sqlite.query<{ tag: string }, []>("SELECT tag FROM __seedcast_migrations").all().map((r) => r.tag),
  );
  const applied: string[] = [];
  for (const migration of MIGRATIONS) {
    if (done.has(migration.tag)) continue;
    sqlite.transaction(() => {
      for (const statement of migration.sql.split(BREAKPOINT)) {
        if (statement.trim()) sqlite.exec(statement);
      }
      sqlite
        .query("INSERT INTO __seedcast_migrations (tag, applied_at) VALUES (?, ?)")
        .run(migration.tag, new Date().toISOString());
    })();
    applied.push(migration.tag);
  }
  return applied;
}

/** The tags of every migration this build carries. */
export function knownMigrations(): string[] {
  return MIGRATIONS.map((m) => m.tag);
}
