// PostgreSQL mirror of src/db/schema/connections.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Connected social accounts ("connections", decisions.md §7). The API never creates them: the admin CLI and the
 * dashboard do. Credentials and cached sessions are sealed with AES-256-GCM under a key derived from the instance
 * secret; only the platform, the public endpoint and the display label are stored in clear.
 */
import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, pgTable, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { CONNECTION_PLATFORMS } from "../../schema/connections";

export const connections = pgTable(
  "connections",
  {
    /** Exposed as the scheduling target's `accountId`. */
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    platform: text("platform", { enum: CONNECTION_PLATFORMS }).notNull(),
    /** e.g. `@alice.bsky.social`, `@bob@mastodon.social`, `hooks.example.com`. */
    label: text("label").notNull(),
    /** Bluesky service URL, Mastodon instance URL or webhook URL (no credentials in it). */
    endpoint: text("endpoint").notNull(),
    /** Sealed JSON of the platform's credentials (app password, access token, signing secret). */
    credentialsSealed: text("credentials_sealed").notNull(),
    /** Sealed JSON of a cached provider session (Bluesky access/refresh JWTs), or null. */
    sessionSealed: text("session_sealed"),
    /** Clear JSON of what the last check learnt: instance limits, provider account id. */
    meta: text("meta").notNull().default("{}"),
    readyToPost: boolean("ready_to_post").notNull().default(false),
    blockedReason: text("blocked_reason"),
    checkedAt: bigint("checked_at", { mode: "number" }),
    /** When the access token stops working (networks whose tokens expire); null when it does not expire. */
    tokenExpiresAt: bigint("token_expires_at", { mode: "number" }),
    /** The single-flight lease of a token refresh (src/publishing/sign-in/refresh.ts): its holder and its end. */
    refreshLeaseToken: text("refresh_lease_token"),
    refreshLeaseExpiresAt: bigint("refresh_lease_expires_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("connections_account_idx").on(t.accountId),
    check("connections_platform_valid", sql`${t.platform} IN (${sql.raw(CONNECTION_PLATFORMS.map((p) => `'${p}'`).join(","))})`),
  ],
);
