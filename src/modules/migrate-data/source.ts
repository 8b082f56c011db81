/**
 * The appliance side of `seedcast migrate-data`: a consistent snapshot of DATA_DIR's database, taken the way
 * `seedcast backup` takes its copy (`VACUUM INTO`: one read transaction, so a running server keeps writing and the
 * copy is one instant), through a read-only connection, so the appliance's own file is never written. The snapshot,
 * not the appliance, is brought to this build's latest SQLite migration.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DB_FILE_NAME } from "../../db/client";
import { knownMigrations, migrateDatabase } from "../../db/migrate";
import { MigrateDataError } from "./errors";

export interface Snapshot {
  sqlite: Database;
  /** SQLite's AUTOINCREMENT high-water marks (`sqlite_sequence`) by table: values never to be handed out again. */
  autoincrement: ReadonlyMap<string, number>;
  /** SQLite migrations this build applied to the snapshot (the appliance ran an older Seedcast); usually none. */
  migrationsApplied: string[];
  close(): void;
}

/** Takes the snapshot of `dataDir`'s database into a private temp folder (removed by `close`). */
export function takeSnapshot(dataDir: string): Snapshot {
  const source = join(dataDir, DB_FILE_NAME);
  if (!existsSync(source)) {
    throw new MigrateDataError(
      "source_missing",
      `${source} does not exist: point DATA_DIR at the data dir of the appliance to move (the folder holding ${DB_FILE_NAME}, instance.secret and media/).`,
    );
  }
  // mkdtemp makes the folder 0700: the snapshot holds hashes and sealed credentials.
  const dir = mkdtempSync(join(tmpdir(), "seedcast-migrate-"));
  const path = join(dir, DB_FILE_NAME);
  let sqlite: Database | null = null;
  try {
    const reader = new Database(source, { readonly: true });
    try {
      reader.exec("PRAGMA busy_timeout = 5000");
      reader.query("VACUUM INTO ?").run(path);
    } finally {
      reader.close();
    }
    sqlite = new Database(path);
    const known = new Set(knownMigrations());
    const hasTable = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__seedcast_migrations'").get() !== null;
    const tags = hasTable ? sqlite.query<{ tag: string }, []>("SELECT tag FROM __seedcast_migrations").all().map((r) => r.tag) : [];
    const unknown = tags.filter((t) => !known.has(t));
    if (unknown.length > 0) {
      throw new MigrateDataError(
        "source_too_new",
        `the appliance's database was migrated by a newer Seedcast (migrations ${unknown.join(", ")} are unknown to this version): run migrate-data with the version the appliance runs, or newer.`,
      );
    }
    if (tags.length === 0) {
      throw new MigrateDataError("source_missing", `${source} is not a Seedcast database (it has no migrations table).`);
    }
    sqlite.exec("PRAGMA foreign_keys = ON");
    const migrationsApplied = migrateDatabase(sqlite);
    const check = sqlite.query<{ quick_check: string }, []>("PRAGMA quick_check").get();
    if (check?.quick_check !== "ok") {
      throw new MigrateDataError("source_damaged", `the snapshot of ${source} failed SQLite's integrity check (${check?.quick_check}); nothing was copied.`);
    }
    const dangling = sqlite.query<{ table: string }, []>("PRAGMA foreign_key_check").all();
    if (dangling.length > 0) {
      const tables = [...new Set(dangling.map((d) => d.table))].join(", ");
      throw new MigrateDataError(
        "source_damaged",
        `the appliance's database has ${dangling.length} rows whose foreign keys point at nothing (in ${tables}); PostgreSQL would refuse them, so nothing was copied.`,
      );
    }
    const opened = sqlite;
    const hasSequences = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'").get() !== null;
    const sequences = hasSequences ? sqlite.query<{ name: string; seq: number }, []>("SELECT name, seq FROM sqlite_sequence").all() : [];
    return {
      sqlite: opened,
      autoincrement: new Map(sequences.map((r) => [r.name, Number(r.seq)])),
      migrationsApplied,
      close() {
        opened.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    sqlite?.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
