// PostgreSQL mirror of src/db/schema/invitations.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Invitations and password-reset links (decisions.md §15), owned by src/modules/accounts/ (invitations.ts, password-resets.ts). Each link is single-use and
 * carries a random token; only its HMAC under the instance secret is stored, so a copy of the database opens nothing.
 * Using one is a conditional UPDATE (`… WHERE used_at IS NULL AND revoked_at IS NULL AND expires_at > now`), so two
 * uses racing on any replicas succeed once.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, users } from "./accounts";

export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: ["owner", "editor", "viewer"] }).notNull(),
    /** HMAC-SHA256 (hex) of the link's token. */
    tokenHash: text("token_hash").notNull(),
    invitedBy: text("invited_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    acceptedAt: bigint("accepted_at", { mode: "number" }),
    acceptedBy: text("accepted_by").references(() => users.id, { onDelete: "set null" }),
    revokedAt: bigint("revoked_at", { mode: "number" }),
  },
  (t) => [
    uniqueIndex("invitations_token_hash_unique").on(t.tokenHash),
    index("invitations_account_idx").on(t.accountId, t.createdAt),
    check("invitations_role_valid", sql`${t.role} IN ('owner','editor','viewer')`),
  ],
);

export const passwordResets = pgTable(
  "password_resets",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** HMAC-SHA256 (hex) of the link's token. */
    tokenHash: text("token_hash").notNull(),
    /** The owner who made the link; null when the person asked for it ("Forgot password"). */
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    usedAt: bigint("used_at", { mode: "number" }),
  },
  (t) => [uniqueIndex("password_resets_token_hash_unique").on(t.tokenHash), index("password_resets_user_idx").on(t.userId, t.createdAt)],
);
