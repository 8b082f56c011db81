// PostgreSQL mirror of src/db/schema/api-keys.ts: the same tables, columns, JavaScript types and constraints.
/** API keys: only an HMAC of the secret and its first characters are stored. */
import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, users } from "./accounts";

export const apiKeys = pgTable(
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
    expiresDays: bigint("expires_days", { mode: "number" }),
    expiresAt: bigint("expires_at", { mode: "number" }),
    /** Set on the outgoing key at rotation: it works until then. */
    graceUntil: bigint("grace_until", { mode: "number" }),
    replacedById: text("replaced_by_id"),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("api_keys_secret_hash_unique").on(t.secretHash), index("api_keys_account_idx").on(t.accountId)],
);
