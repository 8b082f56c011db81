/**
 * One-time reveals of a freshly minted secret (src/modules/dashboard/reveal.ts): the minting POST stores the value
 * here, the GET it redirects to takes it (one conditional DELETE … RETURNING), on whichever replica it lands. The
 * one-time token is in the redirect's URL only: the row holds an HMAC of it, and the value sealed under the instance
 * secret (AES-256-GCM, the token hash as additional data), so a copy of the database shows neither.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { sessions } from "./sessions";

export const secretReveals = sqliteTable(
  "secret_reveals",
  {
    /** HMAC-SHA256 (hex) of the one-time token under the instance secret. */
    tokenHash: text("token_hash").primaryKey(),
    /** The session that may take it; signing out (deleting the session) drops it. */
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** The shown value (title, secret, note) sealed with sealJson under the reveal key label. */
    sealed: text("sealed").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("secret_reveals_expires_idx").on(t.expiresAt), index("secret_reveals_session_idx").on(t.sessionId)],
);
