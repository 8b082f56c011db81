/**
 * The image library. A row exists only after its bytes were written (atomically) to storage, so every row's file is
 * whole. `storage_key` is where the bytes live; the public URL is derived from `id` and `ext`.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const ASSET_SOURCES = ["url", "upload", "generated"] as const;
export type AssetSource = (typeof ASSET_SOURCES)[number];

export const assets = sqliteTable(
  "assets",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fileName: text("file_name").notNull(),
    /** Detected from the bytes, never from a header or a name. */
    mimeType: text("mime_type").notNull(),
    /** png, jpg, gif or webp: the extension of the public URL. */
    ext: text("ext").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    /** Hex SHA-256 of the bytes: the strong ETag of /media. */
    sha256: text("sha256").notNull(),
    storageKey: text("storage_key").notNull(),
    source: text("source", { enum: ASSET_SOURCES }).notNull(),
    /** The URL an ingested image came from (never fetched again). */
    sourceUrl: text("source_url"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("assets_account_created_idx").on(t.accountId, t.createdAt, t.id)],
);
