// PostgreSQL mirror of src/db/schema/creation-versions.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Earlier versions of a creation (decisions.md §15): the content a regenerate, an edit by hand or a restore replaced;
 * the last 10 per creation stay (src/modules/creations/versions.ts).
 */
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import type { StoredVersionContent } from "../../schema/post-content";
import { jsonDocument } from "../columns";
import { creations } from "./creations";

export const creationVersions = pgTable(
  "creation_versions",
  {
    id: text("id").primaryKey(),
    creationId: text("creation_id")
      .notNull()
      .references(() => creations.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    caption: text("caption").notNull(),
    captionSource: text("caption_source").notNull(),
    altText: text("alt_text"),
    altTextSource: text("alt_text_source"),
    imageAssetId: text("image_asset_id"),
    /** Every image, the thread, the first comment and the versions per network; null on versions kept before them. */
    content: jsonDocument<StoredVersionContent>("content"),
    /** When this content was replaced (ms). */
    replacedAt: bigint("replaced_at", { mode: "number" }).notNull(),
  },
  (t) => [index("creation_versions_creation_idx").on(t.creationId, t.id)],
);
