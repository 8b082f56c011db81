// PostgreSQL mirror of src/db/schema/scheduled-posts.ts: the same tables, columns, JavaScript types and constraints.
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
import { bigint, boolean, check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { jsonDocument } from "../columns";
import { accounts } from "./accounts";
import type { StoredImage, StoredPart, StoredVariants } from "../../schema/post-content";
import { POST_STATUSES, TARGET_STATUSES } from "../../schema/scheduled-posts";

export const scheduledPosts = pgTable(
  "scheduled_posts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The creation it was scheduled from (no foreign key: the snapshot outlives edits of the creation). */
    creationId: text("creation_id").notNull(),
    scheduledTime: bigint("scheduled_time", { mode: "number" }).notNull(),
    status: text("status", { enum: POST_STATUSES }).notNull(),
    errorMessage: text("error_message"),
    caption: text("caption").notNull(),
    altText: text("alt_text"),
    /** The snapshot's image: an asset id (assets are immutable), or null for a text-only post. */
    imageAssetId: text("image_asset_id"),
    /** The snapshot's images in order, the first included (mirrored by imageAssetId/altText). */
    images: jsonDocument<StoredImage[]>("images").notNull().default(sql`'[]'::jsonb`),
    /** The snapshot's thread parts. */
    thread: jsonDocument<StoredPart[]>("thread").notNull().default(sql`'[]'::jsonb`),
    /** The snapshot's first comment, null when none. */
    firstComment: text("first_comment"),
    /** The snapshot's versions per network: a target sends the post with its platform's version applied. */
    variants: jsonDocument<StoredVariants>("variants").notNull().default(sql`'{}'::jsonb`),
    /** Put in a posting slot by the queue (decisions.md §14): at most one queued post per account and slot time. */
    queued: boolean("queued").notNull().default(false),
    /** The repeat series this post is an occurrence of (modules/schedule/repeat.ts), null for a one-off post. */
    seriesId: text("series_id"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("scheduled_posts_account_time_idx").on(t.accountId, t.scheduledTime),
    index("scheduled_posts_image_asset_idx").on(t.imageAssetId),
    // Two posts queued at the same moment never take the same slot, on any number of replicas: the database refuses.
    uniqueIndex("scheduled_posts_queue_slot_unique").on(t.accountId, t.scheduledTime).where(sql`${t.queued}`),
    index("scheduled_posts_series_idx").on(t.seriesId),
    check(
      "scheduled_posts_status_valid",
      sql`${t.status} IN ('scheduled','publishing','published','partially_failed','failed','unconfirmed','pending_approval')`,
    ),
  ],
);

export const scheduledPostTargets = pgTable(
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
    partsOut: jsonDocument<string[]>("parts_out").notNull().default(sql`'[]'::jsonb`),
    publishedUrl: text("published_url"),
    errorMessage: text("error_message"),
    /** True once the provider itself holds the post (Mastodon scheduled status). */
    heldByProvider: boolean("held_by_provider").notNull().default(false),
    /** When the dispatcher should next act on it; null when there is nothing for the dispatcher to do. */
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }),
    /** Failed attempts so far (crashes do not count: they are reconciled instead). */
    attempts: bigint("attempts", { mode: "number" }).notNull().default(0),
    leaseToken: text("lease_token"),
    leaseExpiresAt: bigint("lease_expires_at", { mode: "number" }),
    /** Set just before a send leaves; cleared when its outcome is recorded. Set at claim = an unknown outcome. */
    sendStartedAt: bigint("send_started_at", { mode: "number" }),
    withdrawnAt: bigint("withdrawn_at", { mode: "number" }),
    publishedAt: bigint("published_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
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
