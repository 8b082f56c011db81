/**
 * A post's status, derived from its targets and stored with every target write (inside the same transaction), so
 * the calendar and the API never disagree with the targets.
 */
import { eq } from "drizzle-orm";
import type { PostStatus } from "../db/schema/scheduled-posts";
import type { StoreDb } from "../db/store";
import { scheduledPosts, scheduledPostTargets, tablesDialect } from "../db/tables";
import { recordEvent } from "../store/events";
import { noticePostFailed } from "../store/notices";
import { postToApi } from "./post-view";

/** The final statuses, each reported to event webhooks as `post.<status>` when a post reaches it. */
const FINAL_EVENTS = { published: "post.published", failed: "post.failed", partially_failed: "post.partially_failed" } as const;

/** The post status for a set of target statuses (withdrawn ones are ignored). */
export function derivePostStatus(targets: ReadonlyArray<{ status: string }>): PostStatus {
  const live = targets.filter((t) => t.status !== "withdrawn");
  if (live.some((t) => t.status === "publishing")) return "publishing";
  if (live.some((t) => t.status === "scheduled")) return "scheduled";
  const published = live.filter((t) => t.status === "published").length;
  if (published === live.length && live.length > 0) return "published";
  return published === 0 ? "failed" : "partially_failed";
}

/**
 * Recomputes and stores the status (and errorMessage) of `postId` from its targets. When that makes the post final
 * (published, failed, partially_failed), the matching event is recorded for event webhooks in the same transaction,
 * and a failed or partly failed post is a notice to the account's owners and editors (store/notices.ts).
 */
export async function refreshPostStatus(tx: StoreDb, postId: string, now: number): Promise<PostStatus> {
  // PostgreSQL: two deliveries of one post record their targets in concurrent transactions, and under READ COMMITTED
  // neither would see the other's target: both would store "publishing" and the post never become final (no event).
  // Locking the post row first orders them; the second then reads the targets after the first committed. SQLite's
  // writes are serialised already.
  if (tablesDialect() === "postgres") {
    const lock = tx.select({ id: scheduledPosts.id }).from(scheduledPosts).where(eq(scheduledPosts.id, postId));
    await (lock as unknown as { for(strength: "update"): typeof lock }).for("update").all();
  }
  const status = derivePostStatus(
    await tx.select({ status: scheduledPostTargets.status }).from(scheduledPostTargets).where(eq(scheduledPostTargets.postId, postId)).all(),
  );
  // Only a final status has an error message or can be an event: the rows it needs are read only then (most refreshes
  // are claims, which need nothing more).
  if (!(status in FINAL_EVENTS)) {
    await tx.update(scheduledPosts).set({ status, errorMessage: null, updatedAt: now }).where(eq(scheduledPosts.id, postId)).run();
    return status;
  }
  const targets = await tx
    .select()
    .from(scheduledPostTargets)
    .where(eq(scheduledPostTargets.postId, postId))
    .orderBy(scheduledPostTargets.createdAt, scheduledPostTargets.id)
    .all();
  const failed = targets.filter((t) => t.status === "failed");
  const errorMessage = status === "published" ? null : failed.map((t) => `${t.label}: ${t.errorMessage ?? "failed"}`).join(" | ");
  const before = await tx.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get();
  await tx.update(scheduledPosts).set({ status, errorMessage, updatedAt: now }).where(eq(scheduledPosts.id, postId)).run();
  if (before && before.status !== status) {
    const type = FINAL_EVENTS[status as keyof typeof FINAL_EVENTS];
    await recordEvent(tx, now, before.accountId, type, () => ({ post: postToApi({ ...before, status, errorMessage, updatedAt: now }, targets) }));
    if (status !== "published") await noticePostFailed(tx, now, before, errorMessage, status === "partially_failed");
  }
  return status;
}
