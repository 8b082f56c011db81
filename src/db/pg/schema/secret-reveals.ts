// PostgreSQL mirror of src/db/schema/secret-reveals.ts: the same tables, columns, JavaScript types and constraints.
/**
 * One-time reveals of a freshly minted secret (src/modules/dashboard/reveal.ts): the minting POST stores the value
 * here, the GET it redirects to takes it (one conditional DELETE … RETURNING), on whichever replica it lands. The
 * one-time token is in the redirect's URL only: the row holds an HMAC of it, and the value sealed under the instance
 * secret (AES-256-GCM, the token hash as additional data), so a copy of the database shows neither.
 */
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { sessions } from "./sessions";

export const secretReveals = pgTable(
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
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [index("secret_reveals_expires_idx").on(t.expiresAt), index("secret_reveals_session_idx").on(t.sessionId)],
);
