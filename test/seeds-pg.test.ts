/**
 * Seed search on a real PostgreSQL 15 (decisions.md §11: §5's semantics): the same cases as SQLite's
 * (seed-search-cases.ts) through `listSeedsPg`, plus what only PostgreSQL has: the generated search column and its
 * functions (src/db/pg/fts.ts, src/db/pg/schema/seeds.ts), kept in step with edits, and its GIN index in use.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as pgSchema from "../src/db/pg/schema";
import { accounts, seeds } from "../src/db/pg/schema";
import { AppError } from "../src/lib/errors";
import { newId } from "../src/lib/ids";
import { RANK_WINDOW } from "../src/modules/seeds/search";
import { listSeedsPg } from "../src/modules/seeds/search-pg";
import type { SeedPage } from "../src/modules/seeds/service";
import type { PgDb } from "../src/db/pg/client";
import { knownPgMigrations } from "../src/db/pg/migrate";
import { createSeedsDatabase, type SeedsDatabase } from "./helpers/pg-seeds";
import { type Postgres, startPostgres } from "./helpers/postgres";
import { NASTY_SEARCHES, type SearchBackend, type SeedFixture, describeSeedSearch, describeStopwords } from "./seed-search-cases";

let pg: Postgres;
/** The small library of the search cases, and a database of its own for the stopword cases (they count all seeds). */
let main: SeedsDatabase;
let stopwords: SeedsDatabase;

beforeAll(async () => {
  pg = await startPostgres();
  [main, stopwords] = await Promise.all([createSeedsDatabase(pg), createSeedsDatabase(pg)]);
});
afterAll(async () => {
  await Promise.all([main?.close(), stopwords?.close()]);
  await pg?.stop();
});

/** Creates an account row (seeds' foreign key) and answers its id. */
async function newAccount(store: SeedsDatabase): Promise<string> {
  const id = newId();
  await store.db.insert(accounts).values({ id, name: "Test", createdAt: 0 });
  return id;
}

function pgBackend(store: () => SeedsDatabase): () => SearchBackend<string> {
  let clock = 1_000_000;
  return () => ({
    newAccount: () => newAccount(store()),
    async create(accountId, seed, opts) {
      if (!opts?.sameTime) clock += 1000;
      const id = newId();
      await store().db.insert(seeds).values({ id, accountId, ...seed, createdAt: clock, updatedAt: clock });
      return id;
    },
    async insertMany(accountId, rows: SeedFixture[]) {
      const values = rows.map((row, i) => ({ id: newId(), accountId, ...row, createdAt: i, updatedAt: i }));
      // One statement per 1,000 rows, in order, so seq follows the given order.
      for (let i = 0; i < values.length; i += 1000) await store().db.insert(seeds).values(values.slice(i, i + 1000));
      return values.map((v) => v.id);
    },
    async list(accountId, query) {
      try {
        const page = await listSeedsPg(store().db, accountId, {
          search: query.search ?? null,
          limit: query.limit ?? 50,
          cursor: query.cursor ?? null,
        });
        return { status: 200, ids: page.seeds.map((s) => s.id), titles: page.seeds.map((s) => s.title), nextCursor: page.nextCursor };
      } catch (error) {
        if (error instanceof AppError) return { status: error.status, ids: [], titles: [], nextCursor: null };
        throw error;
      }
    },
  });
}

describeSeedSearch("PostgreSQL", pgBackend(() => main));
describeStopwords("PostgreSQL", pgBackend(() => stopwords));

describe("the search column on PostgreSQL", () => {
  test("the migrator creates search's functions first (the generated column needs them), once", async () => {
    expect(knownPgMigrations()[0]).toBe("pg_search_functions_v1");
    const tags = await main.sql`SELECT tag FROM __seedcast_migrations WHERE tag = 'pg_search_functions_v1'`;
    expect(tags.length).toBe(1);
  });

  test("the functions it is built from are IMMUTABLE, and a generated column holds words as FTS5 splits them", async () => {
    const volatility: { proname: string; provolatile: string }[] = await main.sql`SELECT proname, provolatile FROM pg_proc WHERE proname IN ('seedcast_unaccent', 'seedcast_search_words') ORDER BY proname`;
    expect(volatility.map((r) => [r.proname, r.provolatile])).toEqual([
      ["seedcast_search_words", "i"],
      ["seedcast_unaccent", "i"],
    ]);
    const accountId = await newAccount(main);
    const id = newId();
    await main.db.insert(seeds).values({
      id,
      accountId,
      title: "CAFÉ Opening — l’équipe",
      content: "See https://example.com/menu, mail chef@example.org: foo-bar 1.2 <b>bold</b> ΚΑΦΕ Straße 🚀rocket snake_case",
      category: "Announcement",
      createdAt: 1,
      updatedAt: 1,
    });
    const [row] = await main.sql`SELECT search::text AS search, tsvector_to_array(search) AS words FROM seeds WHERE id = ${id}`;
    expect(new Set(row?.words)).toEqual(
      new Set([
        "cafe", "opening", "l", "equipe", "announcement", "see", "https", "example", "com", "menu", "mail", "chef", "org",
        "foo", "bar", "1", "2", "b", "bold", "καφε", "strasse", "rocket", "snake", "case",
      ]),
    );
    // Title words weigh A, the category B, the content D (no letter).
    expect(row?.search).toContain("'cafe':1A");
    expect(row?.search).toContain("'announcement':5B");
    expect(row?.search).toMatch(/'menu':\d+ /);
    const found = await listSeedsPg(main.db, accountId, { search: "example", limit: 10 });
    expect(found.seeds.map((s) => s.id)).toEqual([id]);
  });

  test("it follows edits: an updated seed is found by its new words only; deleting the account removes its seeds", async () => {
    const accountId = await newAccount(main);
    const id = newId();
    await main.db.insert(seeds).values({ id, accountId, title: "Walrus facts", content: "Tusks.", category: null, createdAt: 1, updatedAt: 1 });
    await main.db.update(seeds).set({ title: "Narwhal facts", category: "Ocean" }).where(eq(seeds.id, id));
    const search = async (q: string) => (await listSeedsPg(main.db, accountId, { search: q, limit: 10 })).seeds.map((s) => s.id);
    expect(await search("walrus")).toEqual([]);
    expect(await search("narwh")).toEqual([id]);
    expect(await search("ocean")).toEqual([id]);
    await main.db.delete(accounts).where(eq(accounts.id, accountId));
    expect(await search("narwh")).toEqual([]);
  });

  test("a seed answers the same JavaScript values as on SQLite (integer ms timestamps, nulls)", async () => {
    const accountId = await newAccount(main);
    const id = newId();
    const at = Date.UTC(2026, 10, 24, 10, 0, 0, 123);
    await main.db.insert(seeds).values({ id, accountId, title: "Quokka day", content: "Smiles.", category: null, createdAt: at, updatedAt: at + 1 });
    const page = await listSeedsPg(main.db, accountId, { search: "quokka", limit: 10 });
    expect(page.seeds).toEqual([
      { id, accountId, title: "Quokka day", content: "Smiles.", category: null, imageAssetId: null, imageUrl: null, createdAt: at, updatedAt: at + 1 },
    ]);
  });

  test("no search sends a notice (postgres.js prints them), whatever its words; the search runs on postgres.js too", async () => {
    const notices: string[] = [];
    const client = postgres(main.url, { max: 1, onnotice: (notice) => notices.push(String(notice.message)) });
    try {
      const db = drizzlePostgresJs(client, { schema: pgSchema });
      const accountId = await newAccount(main);
      const id = newId();
      await main.db.insert(seeds).values({ id, accountId, title: "Notice me", content: "Quiet.", category: null, createdAt: 1, updatedAt: 1 });
      for (const q of [...NASTY_SEARCHES, "notice", "notic quiet", "\u0301", `notice ${"a".repeat(490)}`, `x ${"㍿".repeat(490)}`]) {
        await listSeedsPg(db, accountId, { search: q, limit: 10 });
      }
      expect(notices).toEqual([]);
      expect((await listSeedsPg(db, accountId, { search: "notic quiet", limit: 10 })).seeds.map((s) => s.id)).toEqual([id]);
      // The check can fail: what the search avoids (a word too long to index, given to to_tsvector) sends one.
      await client`SELECT to_tsvector('simple', ${"a".repeat(3000)})`;
      expect(notices.length).toBeGreaterThan(0);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  test("the column is indexed with GIN, and its words are those of the search (bench/seed-search-pg.ts shows the plan at scale)", async () => {
    const [index] = await main.sql`SELECT indexdef FROM pg_indexes WHERE tablename = 'seeds' AND indexname = 'seeds_search_idx'`;
    expect(index?.indexdef).toContain("USING gin (search)");
    const [generated] = await main.sql`SELECT attgenerated FROM pg_attribute WHERE attrelid = 'seeds'::regclass AND attname = 'search'`;
    expect(generated?.attgenerated).toBe("s");
  });
});

describe("a word in a few percent of many seeds: the window read from a seq range (search-pg.ts, windowLowerBound)", () => {
  let store: SeedsDatabase;
  let a: string;
  let b: string;
  /** Every query listSeedsPg sent, as text. */
  const sent: string[] = [];
  const BOUNDED = '"seeds"."seq" + 0 DESC';
  /** A fresh handle (its statistics read anew) that records what it sends. */
  const logged = (): PgDb => drizzle({ client: store.sql, schema: pgSchema, logger: { logQuery: (query) => sent.push(query) } });
  beforeAll(async () => {
    store = await createSeedsDatabase(pg);
    b = await newAccount(store);
    a = await newAccount(store);
    // b: 100 old seeds, every one about herons. a: 42,000 newer ones, one in 40 about herons (a title hit in one in
    // 400). "heron" is then in 2.7 % of all seeds, and a holds nearly all of them: a's window is read from a range.
    await store.sql`INSERT INTO seeds (id, account_id, title, content, category, created_at, updated_at)
      SELECT gen_random_uuid()::text, ${b}, 'Bird ' || i, 'A heron at dawn, number ' || i, NULL, i, i FROM generate_series(1, 100) AS i`;
    await store.sql`INSERT INTO seeds (id, account_id, title, content, category, created_at, updated_at)
      SELECT gen_random_uuid()::text, ${a},
        CASE WHEN i % 400 = 0 THEN 'Heron sighting ' || i ELSE 'Note ' || i END,
        CASE WHEN i % 40 = 0 THEN 'A grey heron by the lake, day ' || i ELSE 'Plain words for day ' || i END,
        NULL, 1000 + i, 1000 + i FROM generate_series(1, 42000) AS i`;
    // NB: the statistics change only when this file says so (the last test makes them old on purpose).
    await store.sql`ALTER TABLE seeds SET (autovacuum_enabled = false)`;
    await store.sql`ANALYZE seeds`;
  });
  afterAll(() => store?.close());

  /** The plain form of the search order: the newest RANK_WINDOW matches by ts_rank, then the older ones newest first. */
  async function reference(accountId: string): Promise<string[]> {
    const q = "'heron':*";
    const ranked = await store.sql`SELECT id FROM (SELECT id, seq, search FROM seeds WHERE account_id = ${accountId} AND search @@ ${q}::tsquery
      ORDER BY seq DESC LIMIT ${RANK_WINDOW}) w ORDER BY ts_rank(search, ${q}::tsquery, 1) DESC, seq DESC`;
    const older = await store.sql`SELECT id FROM seeds WHERE account_id = ${accountId} AND search @@ ${q}::tsquery ORDER BY seq DESC OFFSET ${RANK_WINDOW}`;
    return [...ranked, ...older].map((r: { id: string }) => r.id);
  }

  async function everyPage(db: PgDb, accountId: string): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: SeedPage = await listSeedsPg(db, accountId, { search: "Heron", limit: 200, cursor });
      seen.push(...page.seeds.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    return seen;
  }

  test("the bounded window answers exactly what the plain query answers, title hits first", async () => {
    sent.length = 0;
    const seen = await everyPage(logged(), a);
    // Three pages of 200 fall in the window of 500: each reads it from the range, and only from it.
    const windows = sent.filter((query) => query.includes("count(*) OVER ()"));
    expect(windows.length).toBe(3);
    expect(windows.every((query) => query.includes(BOUNDED))).toBe(true);
    expect(seen.length).toBe(1050);
    expect(seen).toEqual(await reference(a));
    const [first] = await store.sql`SELECT title FROM seeds WHERE id = ${seen[0] as string}`;
    expect(first?.title).toStartWith("Heron sighting");
  });

  test("a small account's window is not bounded (its matches are spread over the whole table)", async () => {
    sent.length = 0;
    const seen = await everyPage(logged(), b);
    expect(sent.some((query) => query.includes(BOUNDED))).toBe(false);
    expect(seen).toEqual(await reference(b));
    expect(seen.length).toBe(100);
  });

  test("when the range holds fewer than the window after all (statistics older than the seeds), the window is read again without it", async () => {
    // a's 20,000 newest seeds stop mentioning herons; the statistics still say 2.7 %.
    await store.sql`UPDATE seeds SET content = 'Plain words again' WHERE account_id = ${a} AND created_at > 1000 + 22000`;
    sent.length = 0;
    const seen = await everyPage(logged(), a);
    // Each of the three pages in the window: the bounded window, cut short, then the plain one.
    const windows = sent.filter((query) => query.includes("count(*) OVER ()"));
    expect(windows.map((query) => query.includes(BOUNDED))).toEqual([true, false, true, false, true, false]);
    expect(seen.length).toBe(600); // 550 in the content, and the 50 newer title hits
    expect(seen).toEqual(await reference(a));
  });
});
