/**
 * A post's status, derived from its targets and stored with every target write (inside the same transaction), so
 * the calendar and the API never disagree with the targets.
 */
import { eq } from "drizzle-orm";
import { type PostStatus, scheduledPosts, scheduledPostTargets } from "../db/schema/scheduled-posts";
import type { Db } from "../db/client";

type Tx = Pick<Db, "select" | "update">;

/** The post status for a set of target statuses (withdrawn ones are ignored). */
export function derivePostStatus(targets: ReadonlyArray<{ status: string }>): PostStatus {
  const live = targets.filter((t) => t.status !== "withdrawn");
  if (live.some((t) => t.status === "publishing")) return "publishing";
  if (live.some((t) => t.status === "scheduled")) return "scheduled";
  const published = live.filter((t) => t.status === "published").length;
  if (published === live.length && live.length > 0) return "published";
  return published === 0 ? "failed" : "partially_failed";
}

/** Recomputes and stores the status (and errorMessage) of `postId` from its targets. */
export function refreshPostStatus(tx: Tx, postId: string, now: number): PostStatus {
  const targets = tx
    .select({ status: scheduledPostTargets.status, label: scheduledPostTargets.label, errorMessage: scheduledPostTargets.errorMessage })
    .from(scheduledPostTargets)
    .where(eq(scheduledPostTargets.postId, postId))
    .all();
  const status = derivePostStatus(targets);
  const failed = targets.filter((t) => t.status === "failed");
  const errorMessage =
    status === "failed" || status === "partially_failed"
      ? failed.map((t) => `${t.label}: ${t.errorMessage ?? "failed"}`).join(" | ")
      : null;
  tx.update(scheduledPosts).set({ status, errorMessage, updatedAt: now }).where(eq(scheduledPosts.id, postId)).run();
  return status;
}
