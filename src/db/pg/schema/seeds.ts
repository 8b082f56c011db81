/**
 * Seeds (the PostgreSQL mirror of src/db/schema/seeds.ts): a topic in the author's own words. Plus what FTS5 keeps in
 * a separate table on SQLite: `search`, a stored generated tsvector over title (weight A), category (B) and content
 * (D), with a GIN index. Its words come from `seedcast_search_words` (src/db/pg/fts.ts: lower-cased, unaccented,
 * split where FTS5 splits), which PG_PRE_MIGRATIONS creates before this table. Queried by
 * src/modules/seeds/search-pg.ts; the parity tests leave the tsvector and its index out, as they leave out FTS5.
 */
import { type SQL, sql } from "drizzle-orm";
import { bigint, check, customType, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { SEEDS_ACCOUNT_INDEX } from "../../schema/seeds";
import { SEARCH_TS_CONFIG } from "../fts";
import { accounts } from "./accounts";

/** PostgreSQL's tsvector, read as its text form (services never read it: search-pg.ts ranks with it in SQL). */
const tsvector = customType<{ data: string; driverData: string }>({ dataType: () => "tsvector" });

/** The tsvector of one text column at one weight. */
const weighted = (column: string, weight: "A" | "B" | "D"): SQL =>
  sql.raw(`setweight(to_tsvector('${SEARCH_TS_CONFIG}'::regconfig, public.seedcast_search_words(${column})), '${weight}')`);

/**
 * Weights: ts_rank's default weights for D, C, B, A are 0.1, 0.2, 0.4, 1.0, so content : category : title weigh
 * 1 : 4 : 10, as FTS5's bm25 weights do on SQLite (src/modules/seeds/search.ts).
 */
const SEARCH_EXPRESSION = sql`${weighted('"title"', "A")} || ${weighted(`coalesce("category", '')`, "B")} || ${weighted('"content"', "D")}`;

export const seeds = pgTable(
  "seeds",
  {
    /**
     * SQLite's INTEGER PRIMARY KEY AUTOINCREMENT: an identity that still takes explicit values (by default, not
     * always), so a copy from an appliance can keep every seq (then the sequence is moved past the largest). Search's
     * ranking window (search-pg.ts) follows it, as it follows the rowid on SQLite.
     */
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    id: text("id").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    content: text("content").notNull(),
    category: text("category"),
    /** An asset of the same account. NB: no foreign key: the assets module owns asset rows and refuses deleting one in use. */
    imageAssetId: text("image_asset_id"),
    /** Stored as given, never fetched by the seeds module. */
    imageUrl: text("image_url"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    /**
     * NB: PostgreSQL only, generated (STORED) from title, content and category on every insert and update, never
     * written. A service that selects whole rows reads it too: name the columns instead.
     */
    search: tsvector("search")
      .notNull()
      .generatedAlwaysAs((): SQL => SEARCH_EXPRESSION),
  },
  (t) => [
    uniqueIndex("seeds_id_unique").on(t.id),
    // NB: SQLite's secondary indexes end with the rowid (seq) implicitly; PostgreSQL's do not. The same columns here
    // (the parity test compares them); a query ordering by (created_at, seq) on PostgreSQL sorts the ties itself.
    index("seeds_account_created_idx").on(t.accountId, t.createdAt),
    index("seeds_image_asset_idx").on(t.imageAssetId),
    index(SEEDS_ACCOUNT_INDEX).on(t.accountId),
    index("seeds_search_idx").using("gin", t.search),
    check("seeds_title_length", sql`length(${t.title}) BETWEEN 1 AND 300`),
    check("seeds_content_length", sql`length(${t.content}) BETWEEN 1 AND 20000`),
  ],
);

export type SeedRow = typeof seeds.$inferSelect;
