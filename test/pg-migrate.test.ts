/**
 * The PostgreSQL migrator (src/db/pg/migrate.ts) against a real PostgreSQL 15: on an empty database it applies every
 * embedded migration and the hand-written DDL once, a second run applies nothing, a failing migration leaves nothing
 * half-done and does not keep the lock, and ten processes started at once (replicas) apply each migration exactly
 * once between them while every one of them returns successfully.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getTableName, is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import { openPostgres } from "../src/db/pg/client";
import { knownPgMigrations, MIGRATION_LOCK_KEY, migratePostgres } from "../src/db/pg/migrate";
import * as schema from "../src/db/pg/schema";
import { startPostgres, type Postgres } from "./helpers/postgres";

let pg: Postgres;

beforeAll(async () => {
  pg = await startPostgres();
});

afterAll(async () => {
  await pg?.stop();
});

const dbName = (url: string) => new URL(url).pathname.slice(1);
/** Advisory locks on the migration key, as `granted` flags (one per session holding or waiting). */
const migrationLocks = (database: string) =>
  pg
    .psql(
      `SELECT coalesce(string_agg(granted::text, ',' ORDER BY granted DESC), '') FROM pg_locks
       WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = ${MIGRATION_LOCK_KEY}`,
      database,
    )
    .then((s) => s.trim());

describe("migratePostgres", () => {
  test("applies every migration on an empty database, in order, once; a second run applies nothing", async () => {
    const url = await pg.createDatabase();
    const client = openPostgres(url, { max: 2 });
    try {
      const known = knownPgMigrations();
      // Search's functions first (seeds' generated column calls them), then drizzle's init, then the hand-written rest.
      expect(known.slice(0, 2)).toEqual(["pg_search_functions_v1", "0000_init"]);
      expect(known).toContain("9000_auth_generation_v1");
      expect(await migratePostgres(client.sql)).toEqual(known);
      expect(await migratePostgres(client.sql)).toEqual([]);
      const recorded = await pg.psql("SELECT tag FROM __seedcast_migrations ORDER BY tag", dbName(url));
      expect(recorded.trim().split("\n")).toEqual([...known].sort());
      // The schema is there: every table of src/db/pg/schema plus the migrations' own, and the counter row the
      // hand-written migration inserts.
      const tables = Object.values(schema).filter((v) => is(v, PgTable)).map((t) => getTableName(t as PgTable));
      const present = await pg.psql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1", dbName(url));
      expect(present.trim().split("\n")).toEqual([...tables, "__seedcast_migrations"].sort());
      expect((await pg.psql("SELECT id || ':' || n FROM auth_generation", dbName(url))).trim()).toBe("1:0");
      // The lock is not kept after the run.
      expect(await migrationLocks(dbName(url))).toBe("");
    } finally {
      await client.close();
    }
  });

  test("a migration that fails leaves nothing of itself, records nothing, releases the lock, and the next run succeeds once the cause is gone", async () => {
    const url = await pg.createDatabase();
    const database = dbName(url);
    // Something in the way: a table the init migration creates.
    await pg.psql("CREATE TABLE login_throttle (key text)", database);
    const client = openPostgres(url, { max: 2 });
    try {
      await expect(migratePostgres(client.sql)).rejects.toThrow(/login_throttle/);
      // Only what ran before the failing one is recorded (search's functions); the failing init records nothing.
      expect((await pg.psql("SELECT string_agg(tag, ',') FROM __seedcast_migrations", database)).trim()).toBe("pg_search_functions_v1");
      // Rolled back whole: none of the tables created before the failing statement exists.
      expect((await pg.psql("SELECT to_regclass('public.accounts') IS NULL", database)).trim()).toBe("t");
      expect(await migrationLocks(database)).toBe("");
      await pg.psql("DROP TABLE login_throttle", database);
      expect(await migratePostgres(client.sql)).toEqual(knownPgMigrations().filter((tag) => tag !== "pg_search_functions_v1"));
    } finally {
      await client.close();
    }
  });

  test("ten processes started at once apply every migration exactly once between them, and all succeed", async () => {
    const url = await pg.createDatabase();
    const database = dbName(url);
    // The test holds the migration lock while the ten start, and lets go only once all ten wait for it: they contend
    // for real, whatever the machine's speed.
    const holder = openPostgres(url, { max: 1 });
    const held = await holder.sql.reserve();
    await held.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    const children = Array.from({ length: 10 }, () =>
      Bun.spawn([process.execPath, join(import.meta.dir, "helpers", "pg-migrate-child.ts"), url], { stdout: "pipe", stderr: "pipe" }),
    );
    try {
      const deadline = Date.now() + 60_000;
      while ((await migrationLocks(database)) !== ["true", ...Array(10).fill("false")].join(",")) {
        if (Date.now() > deadline) throw new Error(`the ten never all waited: ${await migrationLocks(database)}`);
        await Bun.sleep(50);
      }
    } finally {
      await held.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
      await held.release();
      await holder.close();
    }
    const results = await Promise.all(
      children.map(async (child) => {
        const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
        return { out, err, code };
      }),
    );
    for (const r of results) expect(r.code, r.err).toBe(0);
    const reported = results.map((r) => (JSON.parse(r.out.trim().split("\n").at(-1)!) as { applied: string[] }).applied);
    const all = reported.flat();
    // Each tag reported by exactly one process, and together they are the whole list.
    expect(all.length).toBe(knownPgMigrations().length);
    expect([...all].sort()).toEqual([...knownPgMigrations()].sort());
    // One process did the work; the other nine found it done.
    expect(reported.filter((r) => r.length === 0).length).toBe(9);
    const recorded = await pg.psql("SELECT tag || ':' || count(*) FROM __seedcast_migrations GROUP BY tag ORDER BY tag", database);
    expect(recorded.trim().split("\n")).toEqual([...knownPgMigrations()].sort().map((t) => `${t}:1`));
    expect(await migrationLocks(database)).toBe("");
  });
});
