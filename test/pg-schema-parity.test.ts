/**
 * Schema parity between the two dialects, read from the REAL databases (not from drizzle's objects): a SQLite file
 * after migrateDatabase (sqlite_master and its pragmas) and a PostgreSQL 15 database after migratePostgres
 * (information_schema and pg_catalog). Every SQLite table exists in PostgreSQL with the same columns, nullability,
 * defaults, primary key, indexes (unique/partial, same columns or expression), foreign keys (same on delete / on
 * update) and CHECK constraints, and PostgreSQL has nothing more. Left out on purpose (test/helpers/schema-shape.ts): search,
 * which each dialect does its own way: SQLite's FTS5 table `seeds_fts` and its shadow tables, PostgreSQL's tsvector
 * columns and their indexes. The last tests change one side of a copy and check that the comparison says so.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { migrateDatabase } from "../src/db/migrate";
import { openPostgres } from "../src/db/pg/client";
import { migratePostgres } from "../src/db/pg/migrate";
import { startPostgres, type Postgres } from "./helpers/postgres";
import { type DatabaseShape, pgShape, shapeDifferences, sqliteShape } from "./helpers/schema-shape";

let pg: Postgres;
let dir: string;
let sqlitePath: string;
let sqlite: DatabaseShape;

/** A freshly migrated PostgreSQL database, changed by `alter` (SQL) before its shape is read. */
async function migratedPg(alter?: string): Promise<DatabaseShape> {
  const url = await pg.createDatabase();
  const client = openPostgres(url, { max: 1 });
  try {
    await migratePostgres(client.sql);
    if (alter) await client.sql.unsafe(alter);
    return await pgShape(client.sql);
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "seedcast-parity-"));
  sqlitePath = join(dir, "seedcast.db");
  const { sqlite: db } = openDatabase(sqlitePath);
  try {
    migrateDatabase(db);
    sqlite = sqliteShape(db);
  } finally {
    db.close();
  }
});

afterAll(async () => {
  await pg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("SQLite and PostgreSQL schemas agree", () => {
  test("every table, column, nullability, primary key, index, foreign key and check is the same on both", async () => {
    const postgres = await migratedPg();
    // The comparison has something to compare: the schema's tables, the migrations' own, and constraints of each kind.
    expect(Object.keys(sqlite.tables).length).toBeGreaterThan(25);
    expect(sqlite.tables.auth_generation).toBeDefined();
    expect(sqlite.tables.__seedcast_migrations).toBeDefined();
    expect(sqlite.tables.idempotency_keys?.primaryKey).toEqual(["account_id", "route", "key"]);
    expect(sqlite.tables.users?.indexes.users_email_unique).toBe("unique whole (lower(email))");
    expect(sqlite.tables.credit_ledger?.indexes.credit_ledger_one_resolution_per_hold).toBe("unique partial (hold_id)");
    expect(sqlite.tables.sessions?.foreignKeys).toContain("(account_id) -> accounts(id) on delete set null on update no action");
    expect(sqlite.tables.users?.columns.is_instance_admin).toBe("not null default false");
    expect(sqlite.tables.accounts?.checks).toEqual(["accounts_balance_non_negative", "accounts_reserved_non_negative"]);

    expect(shapeDifferences(sqlite, postgres)).toEqual([]);
    // Whole-shape equality too, so nothing the difference list words loosely slips through.
    expect(postgres.tables.auth_generation?.checks).toEqual(["auth_generation_single_row"]);
    const { auth_generation: _a, ...sqliteRest } = sqlite.tables;
    const { auth_generation: _b, ...pgRest } = postgres.tables;
    expect(pgRest).toEqual(sqliteRest);
  });

  test("what is left out is search, and only search", async () => {
    expect(sqlite.searchOnly).toEqual(["seeds_fts", "seeds_fts_config", "seeds_fts_data", "seeds_fts_docsize", "seeds_fts_idx"]);
    // PostgreSQL's search column (tsvector + GIN index) is added by the search work; nothing else may be left out.
    const postgres = await migratedPg();
    expect(postgres.searchOnly.every((s) => /^seeds\b|^seeds_/.test(s))).toBe(true);
  });
});

describe("the comparison notices a change to one side", () => {
  test("PostgreSQL: an extra column, a dropped NOT NULL, a dropped index, a changed on delete, a dropped check, another default", async () => {
    const changed = await migratedPg(`
      ALTER TABLE login_throttle ADD COLUMN extra text;
      ALTER TABLE assets ALTER COLUMN sha256 DROP NOT NULL;
      DROP INDEX oauth_tokens_expires_idx;
      ALTER TABLE api_keys DROP CONSTRAINT api_keys_user_id_users_id_fk;
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE SET NULL;
      ALTER TABLE creations DROP CONSTRAINT creations_variant_non_negative;
      ALTER TABLE connections ALTER COLUMN meta SET DEFAULT '[]';`);
    expect(shapeDifferences(sqlite, changed).sort()).toEqual([
      "login_throttle.extra only in PostgreSQL",
      "connections.meta is not null default '{}' in SQLite, not null default '[]' in PostgreSQL",
      "api_keys foreign key (user_id) -> users(id) on delete cascade on update no action only in SQLite",
      "api_keys foreign key (user_id) -> users(id) on delete set null on update no action only in PostgreSQL",
      "assets.sha256 is not null in SQLite, null in PostgreSQL",
      "creations check creations_variant_non_negative only in SQLite",
      "creations CHECK constraints: 1 in SQLite, 0 in PostgreSQL",
      "oauth_tokens index oauth_tokens_expires_idx only in SQLite",
    ].sort());
  });

  test("SQLite: an extra column and an extra unique index", async () => {
    const copy = join(dir, "changed.db");
    const db = new Database(sqlitePath);
    try {
      db.exec(`VACUUM INTO '${copy}'`);
    } finally {
      db.close();
    }
    const changedDb = new Database(copy);
    let changed: DatabaseShape;
    try {
      changedDb.exec("ALTER TABLE seeds ADD COLUMN mood text; CREATE UNIQUE INDEX seeds_title_unique ON seeds (account_id, title)");
      changed = sqliteShape(changedDb);
    } finally {
      changedDb.close();
    }
    expect(shapeDifferences(changed, await migratedPg()).sort()).toEqual([
      "seeds.mood only in SQLite",
      "seeds index seeds_title_unique only in SQLite",
    ].sort());
  });
});
