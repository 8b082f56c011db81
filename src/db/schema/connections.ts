/**
 * Connected social accounts ("connections", decisions.md §7). The API never creates them: the admin CLI and the
 * dashboard do. Credentials and cached sessions are sealed with AES-256-GCM under a key derived from the instance
 * secret; only the platform, the public endpoint and the display label are stored in clear.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const CONNECTION_PLATFORMS = ["bluesky", "mastodon", "webhook", "nostr", "discord", "telegram", "x", "linkedin", "pinterest", "instagram", "facebook", "threads"] as const;
export type ConnectionPlatform = (typeof CONNECTION_PLATFORMS)[number];
/** Each platform's name as people read it, for pages and sentences. */
export const PLATFORM_NAMES: Readonly<Record<ConnectionPlatform, string>> = {
  bluesky: "Bluesky",
  mastodon: "Mastodon",
  webhook: "Webhook",
  nostr: "Nostr",
  discord: "Discord",
  telegram: "Telegram",
  x: "X",
  linkedin: "LinkedIn",
  pinterest: "Pinterest",
  instagram: "Instagram",
  facebook: "Facebook",
  threads: "Threads",
};

/** The name people read for a stored platform string (a target keeps its platform after its connection is gone). */
export function platformName(platform: string): string {
  return (PLATFORM_NAMES as Readonly<Record<string, string>>)[platform] ?? platform;
}

export const connections = sqliteTable(
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
    readyToPost: integer("ready_to_post", { mode: "boolean" }).notNull().default(false),
    blockedReason: text("blocked_reason"),
    checkedAt: integer("checked_at"),
    /** When the access token stops working (networks whose tokens expire); null when it does not expire. */
    tokenExpiresAt: integer("token_expires_at"),
    /** The single-flight lease of a token refresh (src/publishing/sign-in/refresh.ts): its holder and its end. */
    refreshLeaseToken: text("refresh_lease_token"),
    refreshLeaseExpiresAt: integer("refresh_lease_expires_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("connections_account_idx").on(t.accountId),
    check("connections_platform_valid", sql`${t.platform} IN (${sql.raw(CONNECTION_PLATFORMS.map((p) => `'${p}'`).join(","))})`),
  ],
);
