/**
 * Earlier versions of a creation (decisions.md §15: nothing typed by a person is lost without warning). Whenever a
 * regenerate, an edit by hand or a restore replaces a creation's caption, alt text or image, the content it replaces
 * is kept here; the last 10 per creation stay (src/modules/creations/versions.ts).
 *
 * NB for the assets module: `image_asset_id` is the version's image. A kept version does not block deleting that
 * image from the library (a registered reference check counts nothing for this table); restoring a version whose
 * image is gone restores its text and keeps the current image.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { StoredVersionContent } from "./post-content";
import { creations } from "./creations";

export const creationVersions = sqliteTable(
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
    content: text("content", { mode: "json" }).$type<StoredVersionContent>(),
    /** When this content was replaced (ms). */
    replacedAt: integer("replaced_at").notNull(),
  },
  (t) => [index("creation_versions_creation_idx").on(t.creationId, t.id)],
);

export type CreationVersionRow = typeof creationVersions.$inferSelect;
