// PostgreSQL mirror of src/db/schema/upload-links.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Single-use upload links. Only an HMAC of the token is stored; the token itself is the credential in the URL.
 * State is derived: used when `used_at` is set, expired when `expires_at` has passed, else valid.
 */
import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";

export const uploadLinks = pgTable(
  "upload_links",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** HMAC-SHA256 (hex) of the token under the instance secret. */
    tokenHash: text("token_hash").notNull(),
    /** The API key that minted the link (audit only; the link stays bound to the account). */
    createdByKeyId: text("created_by_key_id"),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    usedAt: bigint("used_at", { mode: "number" }),
    /** The asset the link produced. No foreign key: deleting that asset must not be blocked by an old link. */
    assetId: text("asset_id"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("upload_links_token_hash_unique").on(t.tokenHash), index("upload_links_expires_idx").on(t.expiresAt)],
);
