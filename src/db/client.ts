/**
 * Opens the SQLite database with the pragmas Seedcast relies on: WAL (readers never block the writer),
 * foreign keys on, and a busy timeout so concurrent writers (the CLI next to a running server) wait instead of failing.
 */
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema";

export type Db = ReturnType<typeof drizzle<typeof schema>>;

/** The database file's name inside DATA_DIR. */
export const DB_FILE_NAME = "seedcast.db";

/** Opens (creating if needed) the database at `path` and applies the pragmas. */
export function openDatabase(path: string): { sqlite: Database; db: Db } {
  const sqlite = new Database(path, { create: true, strict: true });
  // NB: the busy timeout comes first, so even the journal-mode switch waits for a writer in another process
  // (the server next to a CLI command, or a server restarted while a CLI still holds the file) instead of failing.
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  const db = drizzle(sqlite, { schema });
  return { sqlite, db };
}
