/**
 * PostgreSQL's own side of the storage layer (src/db/pg/store.ts), on a real PostgreSQL 15 (the run's shared cluster,
 * test/helpers/test-database.ts): the builder shim that gives drizzle's pg builders SQLite's `.get/.all/.run` and a
 * named `.prepare()` (it leans on drizzle's class names: an upgrade that renames them fails here), the auth generation
 * watch the key caches read, and `ping` answering false while the server is down and true again after it is back,
 * without reopening the store (what /readyz reports).
 * NB: `useDialect` is process-wide; in a SQLite run this file switches to PostgreSQL's tables and back in afterAll.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { migratePostgres } from "../src/db/pg/migrate";
import { type PgStore, openPgStore } from "../src/db/pg/store";
import * as tables from "../src/db/tables";
import { newId } from "../src/lib/ids";
import type { Postgres } from "./helpers/postgres";
import { TEST_DIALECT, testPostgres } from "./helpers/test-database";

let pg: Postgres;
let store: PgStore;
let url: string;

beforeAll(async () => {
  pg = await testPostgres();
  url = await pg.createDatabase();
  store = openPgStore(url, { max: 4 });
  await migratePostgres(store.client.sql);
  await tables.useDialect("postgres");
}, 60_000);

afterAll(async () => {
  if (TEST_DIALECT === "sqlite") await tables.useDialect("sqlite");
  await store?.close();
});

const newAccount = async (name: string) => {
  const id = newId();
  await store.write((tx) => tx.insert(tables.accounts).values({ id, name, createdAt: 1 }).run());
  return id;
};

describe("the pg builder shim", () => {
  test("select .get/.all, insert/update/delete .run and .returning, prepare with a generated name", async () => {
    expect(Object.getPrototypeOf(tables.accounts).constructor.name).toBe("PgTable");
    const id = await newAccount("Shim");
    const one = await store.db.select({ name: tables.accounts.name }).from(tables.accounts).where(eq(tables.accounts.id, id)).get();
    expect(one).toEqual({ name: "Shim" });
    const none = await store.db.select().from(tables.accounts).where(eq(tables.accounts.id, "nope")).get();
    expect(none).toBeUndefined();
    const updated = await store.write((tx) =>
      tx.update(tables.accounts).set({ name: "Shim 2" }).where(eq(tables.accounts.id, id)).returning({ name: tables.accounts.name }).all(),
    );
    expect(updated).toEqual([{ name: "Shim 2" }]);
    const prepared = store.db
      .select({ name: tables.accounts.name })
      .from(tables.accounts)
      .where(eq(tables.accounts.id, sql.placeholder("id")))
      .prepare();
    expect(await prepared.get({ id })).toEqual({ name: "Shim 2" });
    expect(await prepared.all({ id })).toEqual([{ name: "Shim 2" }]);
    const deleted = await store.write((tx) => tx.delete(tables.accounts).where(eq(tables.accounts.id, id)).returning({ id: tables.accounts.id }).all());
    expect(deleted).toEqual([{ id }]);
    expect(await prepared.get({ id })).toBeUndefined();
  });

  test("a write that throws rolls back; a nested write joins it", async () => {
    const id = await newAccount("Before");
    await expect(
      store.write(async (tx) => {
        await tx.update(tables.accounts).set({ name: "During" }).where(eq(tables.accounts.id, id)).run();
        await store.write((inner) => inner.update(tables.accounts).set({ disabledAt: 5 }).where(eq(tables.accounts.id, id)).run());
        throw new Error("fail");
      }),
    ).rejects.toThrow("fail");
    const row = await store.db.select({ name: tables.accounts.name, disabledAt: tables.accounts.disabledAt }).from(tables.accounts).where(eq(tables.accounts.id, id)).get();
    expect(row).toEqual({ name: "Before", disabledAt: null });
  });
});

describe("the auth generation watch", () => {
  test("answers changed once after a change that decides whether a key works, and not after unrelated writes", async () => {
    const watch = store.authChanges();
    await watch.changed(); // first look
    expect(await watch.changed()).toBe(false);
    const id = await newAccount("Watched");
    expect(await watch.changed()).toBe(false); // a new account: nothing a cached key depends on
    await store.write((tx) => tx.update(tables.accounts).set({ disabledAt: 7 }).where(eq(tables.accounts.id, id)).run());
    expect(await watch.changed()).toBe(true);
    expect(await watch.changed()).toBe(false);
  });
});

describe("the auth generation watch shares reads without missing a commit", () => {
  test("a look asked after a commit reports it, even while an earlier read is in flight (50 rounds)", async () => {
    const watch = store.authChanges();
    const id = await newAccount("Raced");
    await watch.changed();
    const other = openPgStore(url, { max: 1 }); // another replica's connection
    try {
      for (let i = 0; i < 50; i++) {
        const before = watch.changed(); // may still be reading when the commit lands
        await other.write((tx) => tx.update(tables.accounts).set({ disabledAt: 100 + i }).where(eq(tables.accounts.id, id)).run());
        const after = watch.changed(); // asked after the commit: its read must see it
        const [b, a] = await Promise.all([before, after]);
        expect(b || a).toBe(true);
        expect(await watch.changed()).toBe(false);
      }
      // Many looks at once share reads: all answer, and once nothing changed, all say so.
      const looks = await Promise.all(Array.from({ length: 200 }, () => watch.changed()));
      expect(looks.every((l) => l === false)).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe("periodic jobs once cluster-wide", () => {
  test("exclusive(): a second process's run of the same job is skipped while the first holds it; another job runs", async () => {
    const other = openPgStore(url, { max: 2 });
    try {
      let release!: () => void;
      const holding = new Promise<void>((resolve) => {
        release = resolve;
      });
      let firstStarted!: () => void;
      const started = new Promise<void>((resolve) => {
        firstStarted = resolve;
      });
      const first = store.exclusive("tidy", async () => {
        firstStarted();
        await holding;
      });
      await started;
      let ranSecond = false;
      expect(await other.exclusive("tidy", async () => void (ranSecond = true))).toBe(false);
      expect(ranSecond).toBe(false);
      expect(await other.exclusive("another job", async () => {})).toBe(true);
      release();
      expect(await first).toBe(true);
      expect(await other.exclusive("tidy", async () => void (ranSecond = true))).toBe(true);
      expect(ranSecond).toBe(true);
      // A job that throws releases its lock too.
      await expect(store.exclusive("tidy", async () => Promise.reject(new Error("job failed")))).rejects.toThrow("job failed");
      expect(await other.exclusive("tidy", async () => {})).toBe(true);
    } finally {
      await other.close();
    }
  });
});

// Last: it stops and restarts the shared cluster.
describe("ping while the server is down", () => {
  test("false while PostgreSQL is stopped, true again once it is back, on the same store", async () => {
    expect(await store.ping()).toBe(true);
    await pg.pause();
    try {
      expect(await store.ping()).toBe(false);
    } finally {
      await pg.restart();
    }
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      back = await store.ping();
      if (!back) await Bun.sleep(100);
    }
    expect(back).toBe(true);
  }, 30_000);
});
