/**
 * src/db/portable-sql.ts says the same thing on both databases: the larger of two values, the minimum over rows, and
 * drizzle's count(), each read back as a number from a real SQLite file and a real PostgreSQL 15 (where SQLite's
 * scalar `max(a, b)` does not exist and aggregates of bigint come back from the driver as strings).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { count, sql } from "drizzle-orm";
import { openDatabase } from "../src/db/client";
import { migrateDatabase } from "../src/db/migrate";
import { type PgClient, openPostgres } from "../src/db/pg/client";
import { migratePostgres } from "../src/db/pg/migrate";
import { accounts as pgAccounts } from "../src/db/pg/schema";
import { greaterOf, minOf } from "../src/db/portable-sql";
import { accounts } from "../src/db/schema";
import { type Postgres, startPostgres } from "./helpers/postgres";

const ROWS = [
  { id: "a", name: "A", creditsBalance: 5, creditsReserved: 9, disabledAt: null, createdAt: 1 },
  { id: "b", name: "B", creditsBalance: 7, creditsReserved: 2, disabledAt: 3_000_000_000_000, createdAt: 2 },
  { id: "c", name: "C", creditsBalance: 12, creditsReserved: 0, disabledAt: null, createdAt: 3 },
];
// Per row: the larger of balance and coalesce(disabled_at, 0) is 5, 3e12, 12; the least of those is 5.
// Per row: the larger of balance and reserved is 9, 7, 12; the least is 7.

let pg: Postgres;
let client: PgClient;
const dir = mkdtempSync(join(tmpdir(), "seedcast-portable-"));

beforeAll(async () => {
  pg = await startPostgres();
  client = openPostgres(await pg.createDatabase(), { max: 2 });
  await migratePostgres(client.sql);
  await client.db.insert(pgAccounts).values(ROWS);
});

afterAll(async () => {
  await client?.close();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("portable SQL", () => {
  test("SQLite and PostgreSQL give the same numbers, typed as numbers", async () => {
    const { sqlite, db } = openDatabase(join(dir, "p.db"));
    migrateDatabase(sqlite);
    db.insert(accounts).values(ROWS).run();

    const onSqlite = db
      .select({
        n: count(),
        least: minOf(greaterOf(accounts.creditsBalance, accounts.creditsReserved)),
        wake: minOf(greaterOf(accounts.creditsBalance, sql`coalesce(${accounts.disabledAt}, 0)`)),
        none: minOf(sql`${accounts.creditsBalance}`).as("none"),
      })
      .from(accounts)
      .get();
    const [onPg] = await client.db
      .select({
        n: count(),
        least: minOf(greaterOf(pgAccounts.creditsBalance, pgAccounts.creditsReserved)),
        wake: minOf(greaterOf(pgAccounts.creditsBalance, sql`coalesce(${pgAccounts.disabledAt}, 0)`)),
        none: minOf(sql`${pgAccounts.creditsBalance}`).as("none"),
      })
      .from(pgAccounts);
    expect(onSqlite).toEqual({ n: 3, least: 7, wake: 5, none: 5 });
    expect(onPg).toEqual({ n: 3, least: 7, wake: 5, none: 5 });

    // No rows: min is null on both, count 0.
    const emptySqlite = db.select({ n: count(), least: minOf(accounts.creditsBalance) }).from(accounts).where(sql`0 = 1`).get();
    const [emptyPg] = await client.db.select({ n: count(), least: minOf(pgAccounts.creditsBalance) }).from(pgAccounts).where(sql`0 = 1`);
    expect(emptySqlite).toEqual({ n: 0, least: null });
    expect(emptyPg).toEqual({ n: 0, least: null });
    sqlite.close();
  });

  test("SQLite's scalar max(a, b), which these replace, is refused by PostgreSQL", async () => {
    await expect(client.sql.unsafe("SELECT max(1, 2)")).rejects.toThrow("does not exist");
  });
});
