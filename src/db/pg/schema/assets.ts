// PostgreSQL mirror of src/db/schema/assets.ts: the same tables, columns, JavaScript types and constraints.
/**
 * The image library. A row exists only after its bytes were written (atomically) to storage, so every row's file is
 * whole. `storage_key` is where the bytes live; the public URL is derived from `id` and `ext`.
 */
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { ASSET_SOURCES } from "../../schema/assets";

export const assets = pgTable(
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
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    width: bigint("width", { mode: "number" }).notNull(),
    height: bigint("height", { mode: "number" }).notNull(),
    /** Hex SHA-256 of the bytes: the strong ETag of /media. */
    sha256: text("sha256").notNull(),
    storageKey: text("storage_key").notNull(),
    source: text("source", { enum: ASSET_SOURCES }).notNull(),
    /** The URL an ingested image came from (never fetched again). */
    sourceUrl: text("source_url"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("assets_account_created_idx").on(t.accountId, t.createdAt, t.id)],
);
