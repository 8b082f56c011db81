/**
 * Scheduled posts and their per-connection targets (decisions.md §7).
 *
 * A post stores a snapshot of the creation's content at scheduling (caption, alt text, image asset id): what was
 * scheduled is what goes out. NB for the assets module: `scheduled_posts.image_asset_id` is the snapshot's asset;
 * an asset is referenced by a pending post while a post with that image_asset_id has a target whose status is
 * `scheduled` or `publishing` (see assetReferencedByPendingPost in src/modules/schedule/service.ts).
 *
 * Targets carry the dispatcher's fenced lease: `lease_token` + `lease_expires_at`. Every write a delivery makes is
 * conditional on the token it claimed, so a worker whose lease was taken over can never overwrite the new owner.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import type { StoredImage, StoredPart, StoredVariants } from "./post-content";

/**
 * `unconfirmed` (decisions.md §12): every target is final except some whose outcome nobody can tell; `pending_approval`
 * (§14): an editor's post waiting for an owner.
 */
export const POST_STATUSES = ["scheduled", "publishing", "published", "partially_failed", "failed", "unconfirmed", "pending_approval"] as const;
export type PostStatus = (typeof POST_STATUSES)[number];
/**
 * `withdrawn` is internal: a target already withdrawn by a cancel that could not finish (never shown). `unconfirmed`:
 * the network cannot tell whether a send took effect; never resent on its own, a person answers. `pending_approval`:
 * the post waits for an owner (§14).
 */
export const TARGET_STATUSES = ["scheduled", "publishing", "published", "failed", "withdrawn", "unconfirmed", "pending_approval"] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];

export const scheduledPosts = sqliteTable(
  "scheduled_posts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The creation it was scheduled from (no foreign key: the snapshot outlives edits of the creation). */
    creationId: text("creation_id").notNull(),
    scheduledTime: integer("scheduled_time").notNull(),
    status: text("status", { enum: POST_STATUSES }).notNull(),
    errorMessage: text("error_message"),
    caption: text("caption").notNull(),
    altText: text("alt_text"),
    /** The snapshot's image: an asset id (assets are immutable), or null for a text-only post. */
    imageAssetId: text("image_asset_id"),
    /** The snapshot's images in order, the first included (mirrored by imageAssetId/altText). */
    images: text("images", { mode: "json" }).$type<StoredImage[]>().notNull().default(sql`'[]'`),
    /** The snapshot's thread parts. */
    thread: text("thread", { mode: "json" }).$type<StoredPart[]>().notNull().default(sql`'[]'`),
    /** The snapshot's first comment, null when none. */
    firstComment: text("first_comment"),
    /** The snapshot's versions per network: a target sends the post with its platform's version applied. */
    variants: text("variants", { mode: "json" }).$type<StoredVariants>().notNull().default(sql`'{}'`),
    /** Put in a posting slot by the queue (decisions.md §14): at most one queued post per account and slot time. */
    queued: integer("queued", { mode: "boolean" }).notNull().default(false),
    /** The repeat series this post is an occurrence of (modules/schedule/repeat.ts), null for a one-off post. */
    seriesId: text("series_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("scheduled_posts_account_time_idx").on(t.accountId, t.scheduledTime),
    index("scheduled_posts_image_asset_idx").on(t.imageAssetId),
    // Two posts queued at the same moment never take the same slot, on any number of replicas: the database refuses.
    uniqueIndex("scheduled_posts_queue_slot_unique").on(t.accountId, t.scheduledTime).where(sql`${t.queued} = 1`),
    index("scheduled_posts_series_idx").on(t.seriesId),
    check(
      "scheduled_posts_status_valid",
      sql`${t.status} IN ('scheduled','publishing','published','partially_failed','failed','unconfirmed','pending_approval')`,
    ),
  ],
);

export const scheduledPostTargets = sqliteTable(
  "scheduled_post_targets",
  {
    /** Stable per target: the Idempotency-Key and the source of the Bluesky record key. */
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => scheduledPosts.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    /** The connection (null once the connection was removed; the label and platform stay for display). */
    connectionId: text("connection_id"),
    platform: text("platform").notNull(),
    label: text("label").notNull(),
    status: text("status", { enum: TARGET_STATUSES }).notNull(),
    providerPostId: text("provider_post_id"),
    /**
     * The provider ids of the parts already out, in sending order (the post, each thread part, the first comment), so a
     * retry or a recovery after a crash resumes at the first part that is not out. `providerPostId` is the post's.
     */
    partsOut: text("parts_out", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    publishedUrl: text("published_url"),
    errorMessage: text("error_message"),
    /** True once the provider itself holds the post (Mastodon scheduled status). */
    heldByProvider: integer("held_by_provider", { mode: "boolean" }).notNull().default(false),
    /** When the dispatcher should next act on it; null when there is nothing for the dispatcher to do. */
    nextAttemptAt: integer("next_attempt_at"),
    /** Failed attempts so far (crashes do not count: they are reconciled instead). */
    attempts: integer("attempts").notNull().default(0),
    leaseToken: text("lease_token"),
    leaseExpiresAt: integer("lease_expires_at"),
    /** Set just before a send leaves; cleared when its outcome is recorded. Set at claim = an unknown outcome. */
    sendStartedAt: integer("send_started_at"),
    withdrawnAt: integer("withdrawn_at"),
    publishedAt: integer("published_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("scheduled_post_targets_post_idx").on(t.postId),
    index("scheduled_post_targets_due_idx").on(t.status, t.nextAttemptAt),
    index("scheduled_post_targets_connection_idx").on(t.connectionId),
    check(
      "scheduled_post_targets_status_valid",
      sql`${t.status} IN ('scheduled','publishing','published','failed','withdrawn','unconfirmed','pending_approval')`,
    ),
  ],
);
