/**
 * Dashboard sessions: the browser holds a random token in an HttpOnly cookie; only its SHA-256 is stored, so a copy
 * of the database cannot be replayed as a login. Its forms' CSRF token is an HMAC of its id (src/web/csrf.ts), so
 * nothing of it is stored.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, users } from "./accounts";

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    /** SHA-256 (hex) of the cookie token. */
    tokenHash: text("token_hash").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The account the person is looking at; membership is re-checked on every request. */
    accountId: text("account_id").references(() => accounts.id, { onDelete: "set null" }),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    /** Idle expiry, pushed forward on use up to `absoluteExpiresAt`. */
    expiresAt: integer("expires_at").notNull(),
    absoluteExpiresAt: integer("absolute_expires_at").notNull(),
  },
  (t) => [uniqueIndex("sessions_token_hash_unique").on(t.tokenHash), index("sessions_user_idx").on(t.userId)],
);
