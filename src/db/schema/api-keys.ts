/** API keys: only an HMAC of the secret and its first characters are stored. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, users } from "./accounts";

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The member who minted the key; the key's groups are capped by this member's current role. */
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Comma-separated scope strings (read,create,schedule,voice). */
    scopes: text("scopes").notNull(),
    /** HMAC-SHA256 (hex) of the whole secret under the instance secret. */
    secretHash: text("secret_hash").notNull(),
    /** First 8 characters of the secret, for display. */
    prefix: text("prefix").notNull(),
    /** Expiry policy in days; null means never. Rotation copies it. */
    expiresDays: integer("expires_days"),
    expiresAt: integer("expires_at"),
    /** Set on the outgoing key at rotation: it works until then. */
    graceUntil: integer("grace_until"),
    replacedById: text("replaced_by_id"),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("api_keys_secret_hash_unique").on(t.secretHash), index("api_keys_account_idx").on(t.accountId)],
);
