/**
 * Ranked full-text search over one account's seeds (FTS5, bm25).
 *
 * Result order: the account's RANK_WINDOW most recent matches, best bm25 first (title hits weigh most), followed by
 * any older matches, newest first. Why a window: bm25 must be computed for every row it orders, so ranking all matches
 * of a word that occurs in tens of thousands of seeds costs tens of milliseconds; bounding the ranked set keeps a
 * search under a few milliseconds at 100,000 seeds (bench/seed-search.ts) while a search that matches fewer than
 * RANK_WINDOW seeds — nearly every real search — is ranked completely.
 *
 * Ranking reads only the FTS index and the small (account_id, seq) index, never the seeds' rows: those are read only
 * for the page returned.
 *
 * Stopwords — words in at least half of all seeds and in over 5,000 of them ("the", "and"; term-stats.ts) — weigh
 * nothing in bm25 yet cost a walk over every seed holding them, so they are left out: of the ranking and of the filter
 * when the search has other words; a search made only of stopwords lists the seeds holding all of them, newest first.
 */
import type { SqliteStore } from "../../db/store";
import { SEEDS_ACCOUNT_INDEX } from "../../db/schema/seeds";
import { matchExpressionOf } from "./search-query";
import { termStats } from "./term-stats";

/** How many of the most recent matches are ordered by relevance. */
export const RANK_WINDOW = 500;
/** bm25 weights of the FTS columns title, content, category. */
const BM25_WEIGHTS = "10.0, 1.0, 4.0";

/** The window, ranked: `LIMIT ? OFFSET ?` over the newest RANK_WINDOW matches ordered by score. */
const RANKED_SQL = `
  SELECT seq FROM (
    SELECT f.rowid AS seq, bm25(seeds_fts, ${BM25_WEIGHTS}) AS score
    FROM seeds_fts f JOIN seeds s INDEXED BY ${SEEDS_ACCOUNT_INDEX} ON s.seq = f.rowid
    WHERE seeds_fts MATCH ? AND s.account_id = ?
    ORDER BY f.rowid DESC LIMIT ${RANK_WINDOW}
  ) ORDER BY score, seq DESC LIMIT ? OFFSET ?`;

/** All matches newest first; positions from RANK_WINDOW on are the tail after the ranked window. */
const NEWEST_SQL = `
  SELECT f.rowid AS seq FROM seeds_fts f JOIN seeds s INDEXED BY ${SEEDS_ACCOUNT_INDEX} ON s.seq = f.rowid
  WHERE seeds_fts MATCH ? AND s.account_id = ?
  ORDER BY f.rowid DESC LIMIT ? OFFSET ?`;

/**
 * The seq (rowid) of the matches at positions [offset, offset + count) of the result order above, for the words of a
 * search (search-query.ts), read on the store's reader connection.
 */
export function searchSeedSeqs(store: SqliteStore, accountId: string, tokens: readonly string[], offset: number, count: number): number[] {
  const sqlite = store.sqlite;
  const stats = termStats(store);
  const weighted = tokens.filter((token) => !stats.stopword(token));
  if (weighted.length === 0) {
    return sqlite
      .query<{ seq: number }, [string, string, number, number]>(NEWEST_SQL)
      .all(matchExpressionOf(tokens), accountId, count, offset)
      .map((r) => r.seq);
  }
  const match = matchExpressionOf(weighted);
  const out: number[] = [];
  if (offset < RANK_WINDOW) {
    const ranked = sqlite
      .query<{ seq: number }, [string, string, number, number]>(RANKED_SQL)
      .all(match, accountId, Math.min(count, RANK_WINDOW - offset), offset);
    for (const r of ranked) out.push(r.seq);
    // A short window means there are no older matches either.
    if (out.length < Math.min(count, RANK_WINDOW - offset)) return out;
  }
  const remaining = count - out.length;
  if (remaining > 0) {
    const tail = sqlite
      .query<{ seq: number }, [string, string, number, number]>(NEWEST_SQL)
      .all(match, accountId, remaining, Math.max(offset, RANK_WINDOW));
    for (const r of tail) out.push(r.seq);
  }
  return out;
}
