/**
 * Seeds listed and searched on PostgreSQL: the same answers as `listSeeds` (service.ts) gives on SQLite, from the
 * same words (search-query.ts), with the same order, cursors and limits (decisions.md §5, §11).
 *
 * The app reaches it through seed-search.ts when the store is PostgreSQL (with the store's db);
 * test/seeds-pg.test.ts and bench/seed-search-pg.ts call it directly with a drizzle PostgreSQL handle.
 *
 * - Words: `searchTokens` splits and lower-cases the search as for SQLite. Each word then goes through the database's
 *   own `seedcast_search_words` and the `simple` text-search configuration (src/db/pg/fts.ts), exactly as the seed's
 *   title, content and category did when the generated `search` column was computed, so both sides fold case and
 *   accents alike. Every word is a prefix (`'launc':*`) and all are required. A word that folds to nothing (a lone
 *   combining mark) is ignored, as FTS5 ignores it; a word PostgreSQL could never index (2,047 bytes or more) matches
 *   nothing. The folded words of a token are remembered per process (they depend only on the token).
 * - Order: as on SQLite (search.ts), the account's RANK_WINDOW most recent matches (by seq, insertion order), best
 *   first, then older matches newest first. "Best" is ts_rank with title : category : content weighing 10 : 4 : 1
 *   like bm25's weights there, then newest first among equals. For a word in a few percent of the seeds the window
 *   is read from a seq range sized by the column's statistics (windowLowerBound).
 * - Stopwords: the same rule and behaviour as on SQLite (term-stats-pg.ts).
 * - Cursors: cursor.ts, bound to the same search key, so a page's cursor means the same on both.
 */
import { and, desc, eq, gt, lt, or, sql } from "drizzle-orm";
import { SEARCH_MAX_WORD_BYTES, SEARCH_TS_CONFIG } from "../../db/pg/fts";
import type { AnyPgDb } from "../../db/pg/handle";
import { seeds } from "../../db/pg/schema";
import { decodeSeedCursor, encodeSeedCursor } from "./cursor";
import { RANK_WINDOW } from "./search";
import { matchExpressionOf, searchTokens } from "./search-query";
import type { Seed, SeedPage } from "./service";
import { pgTermStats } from "./term-stats-pg";

/**
 * ts_rank's normalisation: rank ÷ (1 + log(document length)), so a long seed that mentions a word once ranks below a
 * short one about it (as bm25's length normalisation does on SQLite).
 */
const RANK_NORMALIZATION = 1;
/** How many times the expected need a bounded window's seq range holds (windowLowerBound). */
const WINDOW_MARGIN = 1.5;
/**
 * Costs relative to a row walked newest first (windowLowerBound): a match listed by the GIN index, a seq of the primary
 * key's range, a match read through the bitmap.
 */
const GIN_MATCH_COST = 0.7;
const RANGE_ROW_COST = 0.1;
const BITMAP_ROW_COST = 7;
/** Tokens whose folded words are remembered per handle before the cache starts over; a bound, not a tuning knob. */
const FOLD_CACHE_LIMIT = 5000;

/** The columns of a seed as services see it (SQLite's SeedRow without seq). */
const SEED_COLUMNS = {
  id: seeds.id,
  accountId: seeds.accountId,
  title: seeds.title,
  content: seeds.content,
  category: seeds.category,
  imageAssetId: seeds.imageAssetId,
  imageUrl: seeds.imageUrl,
  createdAt: seeds.createdAt,
  updatedAt: seeds.updatedAt,
};

/** A search token as the search column holds it: its lexemes, or `tooLong` when one of its words cannot be indexed. */
interface FoldedToken {
  lexemes: string[];
  tooLong: boolean;
}

const folded = new WeakMap<AnyPgDb, Map<string, FoldedToken>>();

/** The lexemes of each token, computed by the database with the search column's own functions. */
async function foldTokens(db: AnyPgDb, tokens: readonly string[]): Promise<Map<string, FoldedToken>> {
  let cache = folded.get(db);
  if (!cache) {
    cache = new Map();
    folded.set(db, cache);
  }
  const out = new Map<string, FoldedToken>();
  const missing: string[] = [];
  for (const token of tokens) {
    const known = cache.get(token);
    if (known) out.set(token, known);
    else missing.push(token);
  }
  if (missing.length === 0) return out;
  // NB: words of SEARCH_MAX_WORD_BYTES or more are left out of to_tsvector (which would drop them with a notice) and
  // reported instead.
  const words = sql`regexp_split_to_table(public.seedcast_search_words(t.tok), ' ')`;
  const rows = await db
    .select({
      tok: sql<string>`t.tok`,
      tooLong: sql<boolean>`EXISTS (SELECT 1 FROM ${words} AS w WHERE octet_length(w) >= ${SEARCH_MAX_WORD_BYTES})`,
      lexemes: sql<string[]>`ARRAY(SELECT l.lexeme FROM unnest(to_tsvector(${SEARCH_TS_CONFIG}::regconfig,
        (SELECT string_agg(w, ' ') FROM ${words} AS w WHERE octet_length(w) < ${SEARCH_MAX_WORD_BYTES}))) AS l)`,
    })
    .from(sql`unnest(ARRAY[${sql.join(missing.map((token) => sql`${token}`), sql`, `)}]::text[]) AS t(tok)`);
  if (cache.size + rows.length > FOLD_CACHE_LIMIT) cache.clear();
  for (const row of rows) {
    const value: FoldedToken = { lexemes: row.lexemes ?? [], tooLong: row.tooLong };
    cache.set(row.tok, value);
    out.set(row.tok, value);
  }
  return out;
}

/** A lexeme as tsquery input: quoted, so nothing in it is read as an operator. */
function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/**
 * The tsquery (as text) requiring every lexeme of `tokens`, each as a prefix when `prefix`; null when no seed can
 * match (a word too long to index, or no lexeme at all: FTS5 finds nothing for a search whose words all fold away).
 */
function tsqueryOf(folds: Map<string, FoldedToken>, tokens: readonly string[], prefix: boolean): string | null {
  const parts: string[] = [];
  for (const token of tokens) {
    const fold = folds.get(token);
    if (!fold || fold.tooLong) return null;
    for (const lexeme of fold.lexemes) parts.push(`${quoteLexeme(lexeme)}${prefix ? ":*" : ""}`);
  }
  return parts.length ? parts.join(" & ") : null;
}

/** Every lexeme of `tokens`. */
function lexemesOf(folds: Map<string, FoldedToken>, tokens: readonly string[]): string[] {
  return tokens.flatMap((token) => folds.get(token)?.lexemes ?? []);
}

/** The account's matches of `query`, newest first, at positions [offset, offset + count). */
async function newestMatches(db: AnyPgDb, accountId: string, query: string, offset: number, count: number): Promise<Seed[]> {
  return db
    .select(SEED_COLUMNS)
    .from(seeds)
    .where(and(eq(seeds.accountId, accountId), sql`${seeds.search} @@ ${query}::tsquery`))
    .orderBy(desc(seeds.seq))
    .limit(count)
    .offset(offset);
}

/**
 * Positions [offset, offset + count) of the account's RANK_WINDOW newest matches of `query`, best first, looking only at
 * seeds with seq > `after` when it is given; `windowSize` is how many matches that (bounded) window held, so the caller
 * can tell whether the bound cut it short (fewer than RANK_WINDOW; 0 also when the page is empty).
 */
async function rankedMatches(
  db: AnyPgDb,
  accountId: string,
  query: string,
  offset: number,
  count: number,
  after: number | null,
): Promise<{ seeds: Seed[]; windowSize: number }> {
  const window = db
    .select({ seq: seeds.seq, search: seeds.search })
    .from(seeds)
    .where(and(eq(seeds.accountId, accountId), sql`${seeds.search} @@ ${query}::tsquery`, after === null ? undefined : gt(seeds.seq, after)))
    // NB: with a bound, ordering by `seq + 0` keeps the planner from walking the primary key backwards through the
    // range (which it prices too low: every row is read to test it); it takes the GIN index's matches ANDed with the
    // range of the primary key instead, and sorts the few hundred found. The order is the same.
    .orderBy(after === null ? desc(seeds.seq) : sql`${seeds.seq} + 0 DESC`)
    .limit(RANK_WINDOW)
    .as("w");
  const ranked = db
    .select({
      seq: window.seq,
      score: sql<number>`ts_rank(${window.search}, ${query}::tsquery, ${sql.raw(String(RANK_NORMALIZATION))})`.as("score"),
      windowSize: sql<number>`(count(*) OVER ())::int`.as("window_size"),
    })
    .from(window)
    .orderBy(sql`score DESC`, desc(window.seq))
    .limit(count)
    .offset(offset)
    .as("r");
  // Only the page's rows are read whole; the window is ranked from its seq and tsvector alone.
  const rows = await db
    .select({ ...SEED_COLUMNS, windowSize: ranked.windowSize })
    .from(ranked)
    .innerJoin(seeds, eq(seeds.seq, ranked.seq))
    .orderBy(desc(ranked.score), desc(ranked.seq));
  return { seeds: rows.map(({ windowSize: _size, ...seed }) => seed), windowSize: rows[0]?.windowSize ?? 0 };
}

/**
 * Where to start reading the window, for a word of middling frequency in a large account; null lets the planner find
 * it its own way.
 *
 * The planner finds the newest RANK_WINDOW matches either by walking the seeds newest first and testing each (cheap
 * for a word in many seeds: "with", in a quarter of them, needs ~2,000 rows) or by reading every match the GIN index
 * lists and sorting them (cheap for a rare word). A word in a few percent of the seeds ("coffee": 3 %) is the worst
 * case of both: 17,000 rows walked, or 3,000 matches read. From the statistics ANALYZE keeps (term-stats-pg.ts: how
 * common the word is, how large the account), a seq range expected to hold WINDOW_MARGIN times the window of the
 * account's matches is read instead: the GIN index's matches ANDed with the primary key's range, ~750 rows read. Costs
 * measured with EXPLAIN ANALYZE at 100,000 seeds (bench/seed-search-pg.ts), relative to a row walked: a match listed
 * by the GIN index 0.7, a seq of the range 0.1, a match read through the bitmap 7; the range is used when it costs
 * less than the walk by that measure. When it holds fewer than RANK_WINDOW matches after all (the statistics are old,
 * or the account's recent seeds use the word less) the caller computes the window again without it.
 */
async function windowLowerBound(db: AnyPgDb, accountId: string, lexemes: readonly string[]): Promise<number | null> {
  const { density, share, maxSeq } = await pgTermStats(db).estimate(lexemes, accountId);
  if (density === null || share === null) return null;
  // Of all seeds (all accounts, in seq order), the share that are this account's matches.
  const expected = density * share;
  const range = Math.ceil((WINDOW_MARGIN * RANK_WINDOW) / expected);
  const walked = RANK_WINDOW / expected;
  const bounded = GIN_MATCH_COST * density * maxSeq + RANGE_ROW_COST * range + BITMAP_ROW_COST * WINDOW_MARGIN * RANK_WINDOW;
  if (walked <= bounded || range >= maxSeq) return null;
  return maxSeq - range;
}

/**
 * The seeds at positions [offset, offset + count) of the search order of `tokens` (the order of search.ts's
 * searchSeedSeqs, on PostgreSQL).
 */
async function searchSeeds(db: AnyPgDb, accountId: string, tokens: readonly string[], offset: number, count: number): Promise<Seed[]> {
  const folds = await foldTokens(db, tokens);
  const stats = pgTermStats(db);
  const weighted: string[] = [];
  for (const token of tokens) {
    const exact = tsqueryOf(folds, [token], false);
    if (exact === null || !(await stats.stopword(exact))) weighted.push(token);
  }
  if (weighted.length === 0) {
    const all = tsqueryOf(folds, tokens, true);
    return all === null ? [] : newestMatches(db, accountId, all, offset, count);
  }
  const query = tsqueryOf(folds, weighted, true);
  if (query === null) return [];
  const out: Seed[] = [];
  if (offset < RANK_WINDOW) {
    const want = Math.min(count, RANK_WINDOW - offset);
    const after = await windowLowerBound(db, accountId, lexemesOf(folds, weighted));
    let ranked = after === null ? null : await rankedMatches(db, accountId, query, offset, want, after);
    if (ranked === null || ranked.windowSize < RANK_WINDOW) ranked = await rankedMatches(db, accountId, query, offset, want, null);
    out.push(...ranked.seeds);
    // A short window means there are no older matches either.
    if (out.length < want) return out;
  }
  const remaining = count - out.length;
  if (remaining > 0) out.push(...(await newestMatches(db, accountId, query, Math.max(offset, RANK_WINDOW), remaining)));
  return out;
}

/**
 * Lists the account's seeds on PostgreSQL: `listSeeds` of service.ts, the same contract. With `search` (words and word
 * prefixes of title, content and category, all required, case- and accent-insensitive): best matches first within the
 * ranking window. Without it, or when it holds no word: newest first.
 */
export async function listSeedsPg(
  db: AnyPgDb,
  accountId: string,
  opts: { search?: string | null; limit: number; cursor?: string | null },
): Promise<SeedPage> {
  const tokens = opts.search ? searchTokens(opts.search) : null;
  const take = opts.limit + 1;
  if (tokens !== null) {
    const searchKey = matchExpressionOf(tokens);
    const cursor = opts.cursor ? decodeSeedCursor(opts.cursor, searchKey) : null;
    const offset = cursor?.kind === "search" ? cursor.offset : 0;
    const rows = await searchSeeds(db, accountId, tokens, offset, take);
    return {
      seeds: rows.slice(0, opts.limit),
      nextCursor: rows.length > opts.limit ? encodeSeedCursor({ kind: "search", offset: offset + opts.limit, search: searchKey }) : null,
    };
  }
  const cursor = opts.cursor ? decodeSeedCursor(opts.cursor, null) : null;
  const after =
    cursor?.kind === "newest"
      ? or(lt(seeds.createdAt, cursor.createdAt), and(eq(seeds.createdAt, cursor.createdAt), lt(seeds.seq, cursor.seq)))
      : undefined;
  const rows = await db
    .select({ ...SEED_COLUMNS, seq: seeds.seq })
    .from(seeds)
    .where(and(eq(seeds.accountId, accountId), after))
    .orderBy(desc(seeds.createdAt), desc(seeds.seq))
    .limit(take);
  const page = rows.slice(0, opts.limit);
  const last = page[page.length - 1];
  return {
    seeds: page.map(({ seq: _seq, ...seed }) => seed),
    nextCursor: rows.length > opts.limit && last ? encodeSeedCursor({ kind: "newest", createdAt: last.createdAt, seq: last.seq }) : null,
  };
}
