/**
 * Seeds: a topic in the author's own words. Searched through the FTS5 table `seeds_fts` (external content, kept in
 * sync by triggers; DDL in src/db/fts.ts because drizzle-kit cannot generate virtual tables).
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** Name of the owner index the search query uses explicitly. */
export const SEEDS_ACCOUNT_INDEX = "seeds_account_idx";

export const seeds = sqliteTable(
  "seeds",
  {
    /**
     * NB: an explicit INTEGER PRIMARY KEY (the rowid) because FTS5 external content is joined on rowid, and VACUUM may
     * renumber the implicit rowid of a table without one. The public id is `id`.
     */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
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
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("seeds_id_unique").on(t.id),
    // NB: every index ends with the rowid (seq), so this one serves "newest first" ordered by (created_at, seq).
    index("seeds_account_created_idx").on(t.accountId, t.createdAt),
    index("seeds_image_asset_idx").on(t.imageAssetId),
    /**
     * (account_id, seq): search checks a match's owner with a probe of this small index instead of reading the seed's
     * (large) row; src/modules/seeds/search.ts names it in INDEXED BY.
     */
    index(SEEDS_ACCOUNT_INDEX).on(t.accountId),
    check("seeds_title_length", sql`length(${t.title}) BETWEEN 1 AND 300`),
    check("seeds_content_length", sql`length(${t.content}) BETWEEN 1 AND 20000`),
  ],
);

export type SeedRow = typeof seeds.$inferSelect;
