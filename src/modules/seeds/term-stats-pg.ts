/**
 * Stopwords on PostgreSQL, by the same rule as SQLite's (term-stats.ts: a word in at least half of all seeds and in
 * over STOPWORD_MIN_SEEDS of them), so that a search answers the same on both. The counts come from the GIN index
 * (`search @@ 'word'`, the exact word as the tsvector holds it) and are kept per process and database handle for
 * TTL_MS, as on SQLite. A count stops as soon as it reaches the point where the answer is known (half of all seeds,
 * and over the floor), so counting "the" in a large library reads half of it once per TTL_MS, not all of it.
 */
import { count, sql } from "drizzle-orm";
import type { AnyPgDb } from "../../db/pg/handle";
import { seeds } from "../../db/pg/schema";
import { CACHE_LIMIT, isStopwordCount, STOPWORD_MIN_SEEDS, TTL_MS } from "./term-stats";

interface Counted {
  n: number;
  at: number;
}

/** What ANALYZE keeps of the seeds (pg_stats), and the newest seq, as read at `at`. */
interface TableStats {
  /** Share of all seeds holding each of the search column's most common lexemes (about a thousand of them). */
  lexemes: Map<string, number>;
  /** Share of all seeds each of the largest accounts holds (up to a hundred of them). */
  accounts: Map<string, number>;
  maxSeq: number;
  at: number;
}

class PgTermStats {
  private readonly words = new Map<string, Counted>();
  private total: Counted | null = null;
  private stats: TableStats | null = null;

  constructor(private readonly db: AnyPgDb) {}

  /**
   * For the ranking window (search-pg.ts, windowLowerBound): the share of all seeds expected to match every lexeme of
   * `lexemes` as a prefix (`density`), the share of all seeds that are `accountId`'s (`share`), and the newest seq.
   * The planner's own estimates, as ANALYZE last counted them: the search column's most common lexemes (a prefix sums
   * every common lexeme it starts; words taken as independent) and the account column's most common values.
   * `density` is null when a lexeme is not among the most common (a word in under about 1 % of the seeds), `share`
   * when the account is not among the largest (or all are about the same size); both when there are no statistics
   * yet. Read once per TTL_MS.
   */
  async estimate(
    lexemes: readonly string[],
    accountId: string,
  ): Promise<{ density: number | null; share: number | null; maxSeq: number }> {
    const now = performance.now();
    if (!this.stats || now - this.stats.at > TTL_MS) {
      const of = (column: string) =>
        sql.raw(`FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'seeds' AND attname = '${column}'`);
      const [row] = await this.db
        .select({
          elems: sql<string[] | null>`(SELECT most_common_elems::text::text[] ${of("search")})`,
          elemFreqs: sql<number[] | null>`(SELECT most_common_elem_freqs ${of("search")})`,
          vals: sql<string[] | null>`(SELECT most_common_vals::text::text[] ${of("account_id")})`,
          valFreqs: sql<number[] | null>`(SELECT most_common_freqs ${of("account_id")})`,
          maxSeq: sql<number | null>`(SELECT max(seq) FROM seeds)::float8`,
        })
        .from(sql`(SELECT 1) AS one`);
      const lexemeShares = new Map<string, number>();
      // NB: most_common_elem_freqs ends with three more numbers (minimum, maximum, nulls): indexed by the elements.
      (row?.elems ?? []).forEach((lexeme, i) => lexemeShares.set(lexeme, row?.elemFreqs?.[i] ?? 0));
      const accountShares = new Map<string, number>();
      (row?.vals ?? []).forEach((account, i) => accountShares.set(account, row?.valFreqs?.[i] ?? 0));
      this.stats = { lexemes: lexemeShares, accounts: accountShares, maxSeq: row?.maxSeq ?? 0, at: now };
    }
    const { maxSeq } = this.stats;
    const share = this.stats.accounts.get(accountId) ?? null;
    let density: number | null = 1;
    for (const lexeme of lexemes) {
      let matching = 0;
      for (const [common, frequency] of this.stats.lexemes) if (common.startsWith(lexeme)) matching += frequency;
      if (matching === 0) {
        density = null;
        break;
      }
      density *= Math.min(1, matching);
    }
    return { density, share, maxSeq };
  }

  /**
   * True when the word whose exact-match tsquery is `exact` (search-pg.ts) is in at least half of all seeds (all
   * accounts, as on SQLite) and in over the floor.
   */
  async stopword(exact: string): Promise<boolean> {
    const now = performance.now();
    if (!this.total || now - this.total.at > TTL_MS) {
      const [row] = await this.db.select({ n: count() }).from(seeds);
      this.total = { n: row?.n ?? 0, at: now };
    }
    const total = this.total.n;
    if (total <= STOPWORD_MIN_SEEDS) return false;
    let counted = this.words.get(exact);
    if (!counted || now - counted.at > TTL_MS) {
      if (this.words.size >= CACHE_LIMIT) this.words.clear();
      // Enough to decide: at the cap the word is in half the seeds and over the floor.
      const cap = Math.max(STOPWORD_MIN_SEEDS + 1, Math.ceil(total / 2));
      const holding = this.db
        .select({ one: sql`1` })
        .from(seeds)
        .where(sql`${seeds.search} @@ ${exact}::tsquery`)
        .limit(cap)
        .as("holding");
      const [row] = await this.db.select({ n: count() }).from(holding);
      counted = { n: row?.n ?? 0, at: now };
      this.words.set(exact, counted);
    }
    return isStopwordCount(counted.n, total);
  }
}

const stats = new WeakMap<AnyPgDb, PgTermStats>();

/** The term statistics of the seeds of `db`. */
export function pgTermStats(db: AnyPgDb): PgTermStats {
  let found = stats.get(db);
  if (!found) {
    found = new PgTermStats(db);
    stats.set(db, found);
  }
  return found;
}
