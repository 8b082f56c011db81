/**
 * Seeds (the PostgreSQL mirror of src/db/schema/seeds.ts): a topic in the author's own words. NB: this file is the
 * plain mirror, without search; the search work adds the generated tsvector column, its GIN index and unaccent.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { SEEDS_ACCOUNT_INDEX } from "../../schema/seeds";
import { accounts } from "./accounts";

export const seeds = pgTable(
  "seeds",
  {
    /**
     * SQLite's INTEGER PRIMARY KEY AUTOINCREMENT: an identity that still takes explicit values (by default, not
     * always), so a copy from an appliance can keep every seq (then the sequence is moved past the largest).
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
  },
  (t) => [
    uniqueIndex("seeds_id_unique").on(t.id),
    // NB: SQLite's secondary indexes end with the rowid (seq) implicitly; PostgreSQL's do not. The same columns here
    // (the parity test compares them); a query ordering by (created_at, seq) on PostgreSQL sorts the ties itself.
    index("seeds_account_created_idx").on(t.accountId, t.createdAt),
    index("seeds_image_asset_idx").on(t.imageAssetId),
    index(SEEDS_ACCOUNT_INDEX).on(t.accountId),
    check("seeds_title_length", sql`length(${t.title}) BETWEEN 1 AND 300`),
    check("seeds_content_length", sql`length(${t.content}) BETWEEN 1 AND 20000`),
  ],
);

export type SeedRow = typeof seeds.$inferSelect;
