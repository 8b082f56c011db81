/**
 * Applies the embedded migrations in order, each in its own transaction, recording them in `__seedcast_migrations`.
 * Runs at start before the first request, and from `seedcast migrate`.
 */
import type { Database } from "bun:sqlite";
import { AUTH_TRIGGER_MIGRATIONS } from "./auth-triggers";
import { FTS_MIGRATIONS } from "./fts";
import { QUEUE_TRIGGER_MIGRATIONS } from "./queue-triggers";
import { embeddedMigrations } from "./migrations-embed" with { type: "macro" };

// NB: FTS (fts.ts), the auth generation triggers (auth-triggers.ts) and the queue generation triggers (queue-triggers.ts)
// are DDL drizzle-kit cannot generate; they run after drizzle's.
const MIGRATIONS = [...embeddedMigrations(), ...FTS_MIGRATIONS, ...AUTH_TRIGGER_MIGRATIONS, ...QUEUE_TRIGGER_MIGRATIONS];
const BREAKPOINT = "--> statement-breakpoint";
/** drizzle-kit writes this around a table rebuild (a changed column or CHECK); it is a no-op inside a transaction. */
const FOREIGN_KEYS_OFF = "PRAGMA foreign_keys=OFF";

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
    // NB: a rebuild drops the old table; with foreign keys on, that drop runs ON DELETE CASCADE and empties every
    // table referring to it (scheduled_post_targets when scheduled_posts is rebuilt). SQLite ignores the pragma
    // inside a transaction, so it is switched off around it, and the keys are checked before the commit.
    const rebuilds = migration.sql.includes(FOREIGN_KEYS_OFF);
    const keysWereOn = sqlite.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys === 1;
    if (rebuilds) sqlite.exec("PRAGMA foreign_keys=OFF");
    try {
      sqlite.transaction(() => {
        for (const statement of migration.sql.split(BREAKPOINT)) {
          if (statement.trim()) sqlite.exec(statement);
        }
        if (rebuilds) {
          const broken = sqlite.query<{ table: string }, []>("PRAGMA foreign_key_check").all();
          if (broken.length > 0) throw new Error(`migration ${migration.tag} breaks foreign keys in ${[...new Set(broken.map((b) => b.table))].join(", ")}`);
        }
        sqlite
          .query("INSERT INTO __seedcast_migrations (tag, applied_at) VALUES (?, ?)")
          .run(migration.tag, new Date().toISOString());
      })();
    } finally {
      if (rebuilds && keysWereOn) sqlite.exec("PRAGMA foreign_keys=ON");
    }
    applied.push(migration.tag);
  }
  return applied;
}

/** The tags of every migration this build carries. */
export function knownMigrations(): string[] {
  return MIGRATIONS.map((m) => m.tag);
}
