/**
 * The PostgreSQL driver we picked (Bun.sql through drizzle-orm/bun-sql, src/db/pg/client.ts) against a real
 * PostgreSQL 15: the values our schema declares come back with the same JavaScript types the SQLite schema gives
 * (jsonb documents, bigint milliseconds as numbers, booleans, nulls), jsonb is stored as the JSON value itself (not a
 * JSON string, the drizzle bun-sql bug src/db/pg/columns.ts works around), and a transaction's conditional
 * `UPDATE … RETURNING` and rollback behave as the money-like writes need.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, gte, sql } from "drizzle-orm";
import { bigint, boolean, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { openPostgres, type PgClient } from "../src/db/pg/client";
import { jsonDocument } from "../src/db/pg/columns";
import { migratePostgres } from "../src/db/pg/migrate";
import { accounts, brandVoices, connections, seeds, users } from "../src/db/pg/schema";
import { startPostgres, type Postgres } from "./helpers/postgres";

const things = pgTable("things", {
  id: text("id").primaryKey(),
  tags: jsonDocument<string[]>("tags").notNull(),
  doc: jsonDocument<{ a: number; nested: { b: string[] } }>("doc"),
  at: bigint("at", { mode: "number" }).notNull(),
  maybeAt: bigint("maybe_at", { mode: "number" }),
  on: boolean("on").notNull().default(false),
  balance: bigint("balance", { mode: "number" }).notNull().default(0),
});
/** drizzle's own jsonb(), only to show what it stores through bun-sql. */
const plain = pgTable("plain", { id: text("id").primaryKey(), tags: jsonb("tags").$type<string[]>().notNull() });

const TRICKY = ["plain", "with \"quotes\" and \\ backslash", "émoji 🎉 ünïcödé", "[looks, like, an, array]", "{\"a\":1}", ""];

let pg: Postgres;
let client: PgClient;
let database: string;

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase();
  database = new URL(url).pathname.slice(1);
  await pg.psql(
    `CREATE TABLE things (id text PRIMARY KEY, tags jsonb NOT NULL, doc jsonb, at bigint NOT NULL, maybe_at bigint,
       "on" boolean NOT NULL DEFAULT false, balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0));
     CREATE TABLE plain (id text PRIMARY KEY, tags jsonb NOT NULL);`,
    database,
  );
  client = openPostgres(url, { max: 4 });
});

afterAll(async () => {
  await client?.close();
  await pg?.stop();
});

const stored = (sqlText: string) => pg.psql(sqlText, database).then((s) => s.trim());

describe("Bun.sql through drizzle: values come back with the types the schema declares", () => {
  test("a jsonb document round-trips exactly and is stored as the JSON value, on insert and on update", async () => {
    const db = client.db;
    await db.insert(things).values({ id: "a", tags: TRICKY, doc: { a: 1, nested: { b: ["x", "y"] } }, at: 1 });
    const [read] = await db.select().from(things).where(eq(things.id, "a"));
    expect(read?.tags).toEqual(TRICKY);
    expect(read?.doc).toEqual({ a: 1, nested: { b: ["x", "y"] } });
    // The server sees an array and an object, so SQL can use them (containment, typeof).
    expect(await stored("SELECT jsonb_typeof(tags) || ' ' || jsonb_typeof(doc) || ' ' || jsonb_array_length(tags) FROM things WHERE id = 'a'")).toBe(
      `array object ${TRICKY.length}`,
    );
    expect(await stored(`SELECT count(*) FROM things WHERE tags @> '["émoji 🎉 ünïcödé"]'`)).toBe("1");

    await db.update(things).set({ tags: [], doc: null }).where(eq(things.id, "a"));
    const [updated] = await db.select({ tags: things.tags, doc: things.doc }).from(things).where(eq(things.id, "a"));
    expect(updated).toEqual({ tags: [], doc: null });
    expect(await stored("SELECT jsonb_typeof(tags) || ' ' || (doc IS NULL) FROM things WHERE id = 'a'")).toBe("array true");
  });

  test("drizzle's own jsonb() through bun-sql stores a JSON string: why src/db/pg/columns.ts exists", async () => {
    // A canary: when this fails, drizzle or Bun fixed the double encoding and jsonDocument may become plain jsonb().
    await client.db.insert(plain).values({ id: "p", tags: ["a"] });
    expect(await stored("SELECT jsonb_typeof(tags) FROM plain WHERE id = 'p'")).toBe("string");
  });

  test("bigint milliseconds come back as numbers (beyond 32 bits, up to the largest safe integer), nulls as null, booleans as booleans", async () => {
    const db = client.db;
    const ms = Date.UTC(2026, 10, 24, 10, 0, 0, 123);
    await db.insert(things).values([
      { id: "t1", tags: ["x"], at: ms, maybeAt: null, on: true },
      { id: "t2", tags: ["y"], at: Number.MAX_SAFE_INTEGER, maybeAt: -1, balance: 2 ** 40 },
    ]);
    const rows = await db.select().from(things).where(sql`${things.id} IN ('t1', 't2')`).orderBy(things.id);
    expect(rows.map((r) => [r.at, r.maybeAt, r.on, r.balance])).toEqual([
      [ms, null, true, 0],
      [Number.MAX_SAFE_INTEGER, -1, false, 2 ** 40],
    ]);
    for (const r of rows) {
      expect(typeof r.at).toBe("number");
      expect(typeof r.balance).toBe("number");
      expect(typeof r.on).toBe("boolean");
    }
    expect(new Date(rows[0]!.at).toISOString()).toBe("2026-11-24T10:00:00.123Z");
    expect(await stored("SELECT at FROM things WHERE id = 't1'")).toBe(String(ms));
  });

  test("a transaction's conditional UPDATE … RETURNING: one row when the condition holds, none when not; a throw rolls everything back", async () => {
    const db = client.db;
    await db.insert(things).values({ id: "m", tags: [], at: 0, balance: 5 });
    const take = (amount: number) =>
      db.transaction(async (tx) => {
        const changed = await tx
          .update(things)
          .set({ balance: sql`${things.balance} - ${amount}` })
          .where(and(eq(things.id, "m"), gte(things.balance, amount)))
          .returning({ balance: things.balance });
        if (changed.length !== 1) throw new Error("insufficient");
        await tx.insert(things).values({ id: `hold_${amount}`, tags: [], at: amount });
        return changed[0]!.balance;
      });
    expect(await take(3)).toBe(2);
    await expect(take(3)).rejects.toThrow("insufficient");
    // The refused one wrote nothing: the balance is untouched and its hold row absent.
    expect(await stored("SELECT balance FROM things WHERE id = 'm'")).toBe("2");
    expect(await stored("SELECT string_agg(id, ',' ORDER BY id) FROM things WHERE id LIKE 'hold_%'")).toBe("hold_3");

    // A failure after the update rolls the update back too.
    await expect(
      db.transaction(async (tx) => {
        await tx.update(things).set({ balance: 0 }).where(eq(things.id, "m"));
        await tx.insert(things).values({ id: "hold_3", tags: [], at: 0 }); // duplicate key
      }),
    ).rejects.toThrow();
    expect(await stored("SELECT balance FROM things WHERE id = 'm'")).toBe("2");
  });

  test("concurrent conditional takes never overdraw: exactly as many succeed as the balance allows", async () => {
    const db = client.db;
    await db.insert(things).values({ id: "c", tags: [], at: 0, balance: 7 });
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        db.transaction(async (tx) => {
          const changed = await tx
            .update(things)
            .set({ balance: sql`${things.balance} - 1` })
            .where(and(eq(things.id, "c"), gte(things.balance, 1)))
            .returning({ balance: things.balance });
          if (changed.length !== 1) throw new Error("insufficient");
        }),
      ),
    );
    expect(attempts.filter((a) => a.status === "fulfilled").length).toBe(7);
    expect(await stored("SELECT balance FROM things WHERE id = 'c'")).toBe("0");
  });

  test("through the real schema (migrated): brand voice lists, millisecond times, booleans and the seeds identity come back as SQLite's do", async () => {
    const url = await pg.createDatabase();
    const real = openPostgres(url, { max: 2 });
    try {
      await migratePostgres(real.sql);
      const now = Date.UTC(2026, 10, 24, 9, 30, 0, 456);
      await real.db.insert(accounts).values({ id: "acct", name: "A", createdAt: now, creditsBalance: 2 ** 40 });
      await real.db.insert(users).values({ id: "u", email: "U@example.com", passwordHash: "h", createdAt: now, isInstanceAdmin: true });
      await real.db.insert(brandVoices).values({
        accountId: "acct",
        tone: "warm",
        audience: "all",
        language: "en",
        emoji: "some",
        hashtags: TRICKY,
        bannedWords: [],
        signature: "",
        updatedAt: now,
      });
      await real.db.insert(connections).values({
        id: "c",
        accountId: "acct",
        platform: "webhook",
        label: "l",
        endpoint: "https://hooks.example.com",
        credentialsSealed: "s",
        createdAt: now,
        updatedAt: now,
      });
      const inserted = await real.db
        .insert(seeds)
        .values([
          { id: "s1", accountId: "acct", title: "t", content: "c", createdAt: now, updatedAt: now },
          { id: "s2", accountId: "acct", title: "t", content: "c", createdAt: now, updatedAt: now },
        ])
        .returning({ seq: seeds.seq });
      expect(inserted).toEqual([{ seq: 1 }, { seq: 2 }]);

      const [account] = await real.db.select().from(accounts);
      expect(account).toEqual({
        id: "acct",
        name: "A",
        creditsBalance: 2 ** 40,
        creditsReserved: 0,
        disabledAt: null,
        createdAt: now,
        timeZone: "UTC",
        approvalRequired: false,
        postingSlots: [],
        queueGeneration: 0,
      });
      const [user] = await real.db.select({ admin: users.isInstanceAdmin }).from(users);
      expect(user).toEqual({ admin: true });
      const [voice] = await real.db.select({ hashtags: brandVoices.hashtags, bannedWords: brandVoices.bannedWords }).from(brandVoices);
      expect(voice).toEqual({ hashtags: TRICKY, bannedWords: [] });
      expect((await pg.psql("SELECT jsonb_typeof(hashtags) FROM brand_voices", new URL(url).pathname.slice(1))).trim()).toBe("array");
      const [connection] = await real.db.select({ ready: connections.readyToPost, meta: connections.meta }).from(connections);
      expect(connection).toEqual({ ready: false, meta: "{}" });
    } finally {
      await real.close();
    }
  });
});
