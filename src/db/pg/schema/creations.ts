// PostgreSQL mirror of src/db/schema/creations.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Creations: the generated social post of a seed (caption, alt text, optional library image). Regenerate rewrites a
 * row in place (same id) and bumps `variant`, which deterministic generators use to vary their output.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text } from "drizzle-orm/pg-core";
import { jsonDocument } from "../columns";
import { accounts } from "./accounts";
import type { StoredImage, StoredPart, StoredVariants } from "../../schema/post-content";

export const creations = pgTable(
  "creations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Only social_post exists today. */
    type: text("type").notNull(),
    /**
     * The seed it was generated from. NB: no foreign key: a creation outlives its seed (it may already be scheduled),
     * and the seeds module owns seed deletion. Null for a post written by hand without a seed (decisions.md §13).
     */
    seedId: text("seed_id"),
    caption: text("caption").notNull(),
    /** Null when the creation has no image. */
    altText: text("alt_text"),
    /**
     * The library asset shown with the caption; null when there is none. NB: no foreign key: a generated asset's row is
     * inserted by the assets module in the same transaction, after this row; the assets module refuses deleting an
     * asset in use (it counts every `image_asset_id` column, 409 asset_in_use).
     */
    imageAssetId: text("image_asset_id"),
    /** Every image in order, the first included (mirrored by imageAssetId/altText). */
    images: jsonDocument<StoredImage[]>("images").notNull().default(sql`'[]'::jsonb`),
    /** The thread's follow-up parts, in order. */
    thread: jsonDocument<StoredPart[]>("thread").notNull().default(sql`'[]'::jsonb`),
    /** Text posted as the first comment or reply right after the post; null when none. */
    firstComment: text("first_comment"),
    /** A version per network. */
    variants: jsonDocument<StoredVariants>("variants").notNull().default(sql`'{}'::jsonb`),
    aspectRatio: text("aspect_ratio").notNull(),
    mediaStyle: text("media_style").notNull(),
    /**
     * Who wrote the caption: the generator's name (`builtin`, `openai`), or `hand` after an edit by hand (PATCH, the
     * dashboard). A regenerate asks first in the dashboard before replacing text written by hand.
     */
    captionSource: text("caption_source").notNull().default("generated"),
    /** Who wrote the alt text, like captionSource; null when the creation has no image. */
    altTextSource: text("alt_text_source"),
    /** 0 at generate; +1 on every regenerate. */
    variant: bigint("variant", { mode: "number" }).notNull().default(0),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("creations_account_idx").on(t.accountId, t.id),
    index("creations_account_seed_idx").on(t.accountId, t.seedId, t.id),
    index("creations_image_asset_idx").on(t.imageAssetId),
    check("creations_variant_non_negative", sql`${t.variant} >= 0`),
  ],
);

export type CreationRow = typeof creations.$inferSelect;
