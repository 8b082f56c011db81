/**
 * Listing and searching seeds, one interface over both databases (docs/storage-layer-plan.md §6.2): SQLite's FTS5
 * (search.ts, term-stats.ts) on the store's read-only reader connection, or PostgreSQL's tsvector search
 * (search-pg.ts, term-stats-pg.ts) on the store's pool. Same contract, order, cursors and limits on both
 * (test/seed-search-cases.ts).
 */
import type { AnyPgDb } from "../../db/pg/handle";
import { isSqliteStore, type SqliteStore, type Store } from "../../db/store";
import { decodeSeedCursor, encodeSeedCursor } from "./cursor";
import { searchSeedSeqs } from "./search";
import { matchExpressionOf, searchTokens } from "./search-query";
import type { Seed, SeedPage } from "./service";

export interface SeedListOptions {
  search?: string | null;
  limit: number;
  cursor?: string | null;
}

/** The seeds list of one store (service.ts's listSeeds). */
export interface SeedSearch {
  list(accountId: string, opts: SeedListOptions): Promise<SeedPage>;
}

/** The seed search for `store`'s dialect. */
export function seedSearchOf(store: Store): SeedSearch {
  if (isSqliteStore(store)) return { list: async (accountId, opts) => listSeedsSqlite(store, accountId, opts) };
  // NB: on PostgreSQL `store.db` is a drizzle Bun.sql database (or, inside a write, its transaction) typed as SQLite's
  // (db/pg/store.ts); the PostgreSQL search builds pg-core queries on it. Loaded only in that mode (the pg-core schema
  // stays out of the appliance's start).
  return {
    list: async (accountId, opts) => {
      const { listSeedsPg } = await import("./search-pg");
      return listSeedsPg(store.db as unknown as AnyPgDb, accountId, opts);
    },
  };
}

interface RawSeedRow {
  seq: number;
  id: string;
  account_id: string;
  title: string;
  content: string;
  category: string | null;
  image_asset_id: string | null;
  image_url: string | null;
  created_at: number;
  updated_at: number;
}

function fromRaw(r: RawSeedRow): Seed {
  return {
    id: r.id,
    accountId: r.account_id,
    title: r.title,
    content: r.content,
    category: r.category,
    imageAssetId: r.image_asset_id,
    imageUrl: r.image_url,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * SQLite: best bm25 matches first (see search.ts for the ranking window), or newest first. Raw statements on the
 * reader connection (query_only), which sees committed rows only.
 */
function listSeedsSqlite(store: SqliteStore, accountId: string, opts: SeedListOptions): SeedPage {
  const sqlite = store.sqlite;
  const tokens = opts.search ? searchTokens(opts.search) : null;
  const take = opts.limit + 1;
  let rows: RawSeedRow[];
  let next: (last: RawSeedRow) => string;
  if (tokens !== null) {
    const searchKey = matchExpressionOf(tokens);
    const cursor = opts.cursor ? decodeSeedCursor(opts.cursor, searchKey) : null;
    const offset = cursor?.kind === "search" ? cursor.offset : 0;
    const seqs = searchSeedSeqs(store, accountId, tokens, offset, take);
    // NB: raw SQL for the page's rows by seq; the order is the search's, restored below.
    const found = seqs.length
      ? sqlite.query<RawSeedRow, number[]>(`SELECT * FROM seeds WHERE seq IN (${seqs.map(() => "?").join(",")})`).all(...seqs)
      : [];
    const bySeq = new Map(found.map((r) => [r.seq, r]));
    rows = seqs.map((seq) => bySeq.get(seq)).filter((r): r is RawSeedRow => r !== undefined);
    next = () => encodeSeedCursor({ kind: "search", offset: offset + opts.limit, search: searchKey });
  } else {
    const cursor = opts.cursor ? decodeSeedCursor(opts.cursor, null) : null;
    if (cursor?.kind === "newest") {
      rows = sqlite
        .query<RawSeedRow, [string, number, number, number, number]>(
          `SELECT * FROM seeds WHERE account_id = ? AND (created_at < ? OR (created_at = ? AND seq < ?))
           ORDER BY created_at DESC, seq DESC LIMIT ?`,
        )
        .all(accountId, cursor.createdAt, cursor.createdAt, cursor.seq, take);
    } else {
      rows = sqlite
        .query<RawSeedRow, [string, number]>("SELECT * FROM seeds WHERE account_id = ? ORDER BY created_at DESC, seq DESC LIMIT ?")
        .all(accountId, take);
    }
    next = (last) => encodeSeedCursor({ kind: "newest", createdAt: last.created_at, seq: last.seq });
  }
  const page = rows.slice(0, opts.limit);
  const last = page[page.length - 1];
  return { seeds: page.map(fromRaw), nextCursor: rows.length > opts.limit && last ? next(last) : null };
}
