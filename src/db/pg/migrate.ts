/**
 * Applies PostgreSQL's migrations, as src/db/migrate.ts does SQLite's: the embedded drizzle-kit migrations
 * (migrations-pg/), then the DDL drizzle-kit cannot generate, each in its own transaction, recorded by tag in
 * `__seedcast_migrations`. Replicas may start at once (decisions.md §11): the whole run holds a session advisory lock
 * on one reserved connection, so the first applies everything and the others wait, then find every tag recorded. The
 * lock is released in `finally` (and by the server if the connection dies), so a failed run never blocks the next.
 */
import type { SQL } from "bun";
import { embeddedMigrations } from "../migrations-embed" with { type: "macro" };
import type { EmbeddedMigration } from "../migrations-embed";
import { PG_AUTH_TRIGGER_MIGRATIONS } from "./auth-triggers";
import { PG_PRE_MIGRATIONS } from "./fts";
import { PG_QUEUE_TRIGGER_MIGRATIONS } from "./queue-triggers";

// NB: the fixed order: search's functions (fts.ts: seeds' generated tsvector column calls them, so they come before
// the tables), drizzle's (tables), then the hand-written DDL over them (the auth triggers). A new hand-written module
// is appended with a new tag, never inserted before one.
const MIGRATIONS: readonly EmbeddedMigration[] = [
  ...PG_PRE_MIGRATIONS,
  ...embeddedMigrations("migrations-pg"),
  ...PG_AUTH_TRIGGER_MIGRATIONS,
  ...PG_QUEUE_TRIGGER_MIGRATIONS,
];
const BREAKPOINT = "--> statement-breakpoint";

/** The advisory lock key every Seedcast process takes to migrate ("seedcast" in ASCII, as a bigint). */
export const MIGRATION_LOCK_KEY = 0x73656564636173n;

/** Applies every migration not yet applied; returns the tags this call applied (none when another process did). */
export async function migratePostgres(sql: SQL): Promise<string[]> {
  const conn = await sql.reserve();
  let unlocked = false;
  try {
    await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      return await applyPending(conn);
    } finally {
      unlocked = await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`).then(
        () => true,
        () => false,
      );
    }
  } finally {
    // NB: a connection whose unlock failed may still hold the lock: it is closed (which ends the lock), never handed
    // back to the pool. Either way the error that matters is the migration's, not this one.
    if (unlocked) await conn.release();
    else await conn.close().catch(() => {});
  }
}

async function applyPending(conn: SQL): Promise<string[]> {
  await conn.unsafe("CREATE TABLE IF NOT EXISTS __seedcast_migrations (tag text PRIMARY KEY NOT NULL, applied_at text NOT NULL)");
  const rows: { tag: string }[] = await conn.unsafe("SELECT tag FROM __seedcast_migrations");
  const done = new Set(rows.map((r) => r.tag));
  const applied: string[] = [];
  for (const migration of MIGRATIONS) {
    if (done.has(migration.tag)) continue;
    await conn.begin(async (tx) => {
      for (const statement of migration.sql.split(BREAKPOINT)) {
        if (statement.trim()) await tx.unsafe(statement);
      }
      await tx`INSERT INTO __seedcast_migrations (tag, applied_at) VALUES (${migration.tag}, ${new Date().toISOString()})`;
    });
    applied.push(migration.tag);
  }
  return applied;
}

/** The tags of every PostgreSQL migration this build carries, in the order they apply. */
export function knownPgMigrations(): string[] {
  return MIGRATIONS.map((m) => m.tag);
}
