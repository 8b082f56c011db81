/**
 * Which search words act as stopwords: found in at least half of all indexed seeds, and in more than
 * STOPWORD_MIN_SEEDS of them. FTS5's bm25 gives a word in half the seeds an IDF of a millionth (it clamps
 * log((N - n + 0.5) / (n + 0.5)) ≤ 0 to 1e-6), so next to any other word it weighs nothing; alone it still orders
 * results by how often they use it, which says nothing about them. Yet bm25 walks every seed holding the word to count
 * them, on every search: 3 ms for "the" at 100,000 seeds. The floor keeps small libraries, where a word in half the
 * seeds is an ordinary word and costs nothing, fully ranked.
 *
 * Counts come from an fts5vocab table over the index (the same walk, once) and are kept per process for TTL_MS: a
 * count a few minutes old only decides whether a word joins the ranking. They are read for the exact word: a prefix
 * token (`"the"*`) matches at least every seed holding the exact word, so a common word makes its prefix common too
 * (never the other way round, so a word that does carry weight is never dropped).
 */
import type { Database } from "bun:sqlite";
import type { SqliteStore } from "../../db/store";

/** How long a count is trusted (also by the PostgreSQL search, term-stats-pg.ts). */
export const TTL_MS = 10 * 60 * 1000;
/** Below this many seeds holding it, no word is a stopword. */
export const STOPWORD_MIN_SEEDS = 5000;
/** Words remembered before the cache starts over; a bound, not a tuning knob. */
export const CACHE_LIMIT = 5000;

/** The rule, on counts: a word in `n` of `total` seeds is a stopword when it is in over the floor and half of them. */
export function isStopwordCount(n: number, total: number): boolean {
  return n > STOPWORD_MIN_SEEDS && n * 2 >= total;
}

interface Counted {
  n: number;
  at: number;
}

class TermStats {
  private readonly docs: { get(term: string): { doc: number } | null };
  private readonly rows: { get(): { n: number } | null };
  private readonly words = new Map<string, Counted>();
  private total: Counted | null = null;

  constructor(store: SqliteStore) {
    // A temp table belongs to this connection only and writes nothing to the database file; the reader is query_only,
    // which refuses even that, so it is created through readerDdl.
    store.readerDdl((reader) =>
      reader.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.seeds_fts_terms USING fts5vocab(main, seeds_fts, row)"),
    );
    const sqlite = store.sqlite;
    this.docs = sqlite.query("SELECT doc FROM temp.seeds_fts_terms WHERE term = ?") as unknown as TermStats["docs"];
    this.rows = sqlite.query("SELECT count(*) AS n FROM seeds") as unknown as TermStats["rows"];
  }

  /** True when `word` is in at least half of all indexed seeds (all accounts, as bm25 counts) and in over the floor. */
  stopword(word: string): boolean {
    const now = performance.now();
    if (!this.total || now - this.total.at > TTL_MS) this.total = { n: this.rows.get()?.n ?? 0, at: now };
    if (this.total.n <= STOPWORD_MIN_SEEDS) return false;
    let counted = this.words.get(word);
    if (!counted || now - counted.at > TTL_MS) {
      if (this.words.size >= CACHE_LIMIT) this.words.clear();
      counted = { n: this.docs.get(word)?.doc ?? 0, at: now };
      this.words.set(word, counted);
    }
    return isStopwordCount(counted.n, this.total.n);
  }
}

const stats = new WeakMap<Database, TermStats>();

/** The term statistics of the seed index, read on `store`'s reader connection. */
export function termStats(store: SqliteStore): TermStats {
  let found = stats.get(store.sqlite);
  if (!found) {
    found = new TermStats(store);
    stats.set(store.sqlite, found);
  }
  return found;
}
