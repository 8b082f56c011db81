// PostgreSQL mirror of src/db/schema/sessions.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Dashboard sessions: the browser holds a random token in an HttpOnly cookie; only its SHA-256 is stored, so a copy
 * of the database cannot be replayed as a login. Its forms' CSRF token is an HMAC of its id (src/web/csrf.ts), so
 * nothing of it is stored.
 */
import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, users } from "./accounts";

export const sessions = pgTable(
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
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastSeenAt: bigint("last_seen_at", { mode: "number" }).notNull(),
    /** Idle expiry, pushed forward on use up to `absoluteExpiresAt`. */
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    absoluteExpiresAt: bigint("absolute_expires_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("sessions_token_hash_unique").on(t.tokenHash), index("sessions_user_idx").on(t.userId)],
);
