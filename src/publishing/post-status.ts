/**
 * A post's status, derived from its targets and stored with every target write (inside the same transaction), so
 * the calendar and the API never disagree with the targets.
 */
import { inArray } from "drizzle-orm";
import type { PostStatus } from "../db/schema/scheduled-posts";
import type { StoreDb } from "../db/store";
import { eventWebhooks, scheduledPosts, scheduledPostTargets, tablesDialect } from "../db/tables";
import { recordEvent } from "../store/events";
import { noticePostFailed, noticePostUnconfirmed } from "../store/notices";
import { postToApi } from "./post-view";

/** The final statuses, each reported to event webhooks as `post.<status>` when a post reaches it. */
const FINAL_EVENTS = { published: "post.published", failed: "post.failed", partially_failed: "post.partially_failed" } as const;
/**
 * Every status reported to event webhooks when a post reaches it: the final ones, and `unconfirmed` (not final: it waits
 * for a person's answer, which makes it final, or sends it again).
 */
const STATUS_EVENTS = { ...FINAL_EVENTS, unconfirmed: "post.unconfirmed" } as const;

type TargetRow = typeof scheduledPostTargets.$inferSelect;
type PostRow = typeof scheduledPosts.$inferSelect;

/** How a post ended: it reached a final status (published, partially_failed, failed), or it was cancelled. */
export type PostEnd = "final" | "cancelled";
type PostEndListener = (tx: StoreDb, now: number, post: PostRow, end: PostEnd) => Promise<void>;
const endListeners: PostEndListener[] = [];

/**
 * Registers what runs, inside the transaction that records it, when a post ends (the repeat of a series schedules its
 * next occurrence: modules/schedule/repeat.ts). The engine knows nothing of what listens.
 */
export function onPostEnded(listener: PostEndListener): void {
  endListeners.push(listener);
}

/** Tells the listeners that `post` ended, inside the caller's transaction (the cancel's, or a status refresh's). */
export async function postEnded(tx: StoreDb, now: number, post: PostRow, end: PostEnd): Promise<void> {
  for (const listener of endListeners) await listener(tx, now, post, end);
}

/**
 * The post status for a set of target statuses (withdrawn ones are ignored). Every target final except some
 * `unconfirmed` ones: `unconfirmed` (decisions.md §12), until a person answers for each.
 */
export function derivePostStatus(targets: ReadonlyArray<{ status: string }>): PostStatus {
  const live = targets.filter((t) => t.status !== "withdrawn");
  if (live.some((t) => t.status === "publishing")) return "publishing";
  // Held for an owner's approval (modules/schedule/approval.ts): never claimed, not final.
  if (live.some((t) => t.status === "pending_approval")) return "pending_approval";
  if (live.some((t) => t.status === "scheduled")) return "scheduled";
  if (live.some((t) => t.status === "unconfirmed")) return "unconfirmed";
  const published = live.filter((t) => t.status === "published").length;
  if (published === live.length && live.length > 0) return "published";
  return published === 0 ? "failed" : "partially_failed";
}

/**
 * PostgreSQL: locks the rows of `postIds` (FOR UPDATE, in id order) and answers them. Two deliveries of one post record
 * their targets in concurrent transactions, and under READ COMMITTED neither would see the other's target: both would
 * store "publishing" and the post never become final (no event). Locking the post row first orders them; the second
 * then reads the targets after the first committed. Writers taking several posts take them in one order (id), so
 * they cannot deadlock. SQLite's writes are serialised already: a plain read.
 */
async function lockPosts(tx: StoreDb, postIds: readonly string[]): Promise<(typeof scheduledPosts.$inferSelect)[]> {
  const query = tx.select().from(scheduledPosts).where(inArray(scheduledPosts.id, [...postIds])).orderBy(scheduledPosts.id);
  if (tablesDialect() !== "postgres") return query.all();
  return (query as unknown as { for(strength: "update"): typeof query }).for("update").all();
}

/**
 * Recomputes and stores the status (and errorMessage) of `postId` from its targets. When that makes the post final
 * (published, failed, partially_failed) or unconfirmed, the matching event is recorded for event webhooks in the same transaction,
 * and a failed or partly failed post is a notice to the account's owners and editors (store/notices.ts).
 */
export async function refreshPostStatus(tx: StoreDb, postId: string, now: number): Promise<PostStatus> {
  return (await refreshPostStatuses(tx, [postId], now)).get(postId) ?? derivePostStatus([]);
}

/**
 * refreshPostStatus for many posts at once (the dispatcher records a batch of outcomes in one transaction): a fixed
 * number of statements whatever the number of posts, one UPDATE per distinct (status, errorMessage). Answers each
 * existing post's new status.
 */
export async function refreshPostStatuses(tx: StoreDb, postIds: readonly string[], now: number): Promise<Map<string, PostStatus>> {
  const statuses = new Map<string, PostStatus>();
  if (postIds.length === 0) return statuses;
  const posts = await lockPosts(tx, [...new Set(postIds)]);
  if (posts.length === 0) return statuses;
  const targetsOf = new Map<string, TargetRow[]>(posts.map((p) => [p.id, []]));
  const rows = await tx
    .select()
    .from(scheduledPostTargets)
    .where(inArray(scheduledPostTargets.postId, posts.map((p) => p.id)))
    .orderBy(scheduledPostTargets.createdAt, scheduledPostTargets.id)
    .all();
  for (const t of rows) targetsOf.get(t.postId)?.push(t);
  // Posts that take the same values are updated by one statement.
  const groups = new Map<string, { status: PostStatus; errorMessage: string | null; ids: string[] }>();
  const reached: { post: (typeof posts)[number]; status: keyof typeof STATUS_EVENTS; errorMessage: string | null }[] = [];
  for (const post of posts) {
    const targets = targetsOf.get(post.id) ?? [];
    const status = derivePostStatus(targets);
    statuses.set(post.id, status);
    // Only a final status (or unconfirmed, which waits for a person) has an error message or can be an event.
    const final = status in FINAL_EVENTS;
    const errorMessage =
      (final && status !== "published") || status === "unconfirmed"
        ? targets
            .filter((t) => t.status === "failed" || t.status === "unconfirmed")
            .map((t) => `${t.label}: ${t.errorMessage ?? "failed"}`)
            .join(" | ")
        : null;
    const key = `${status}\u0000${errorMessage ?? "\u0001"}`;
    const group = groups.get(key) ?? { status, errorMessage, ids: [] };
    group.ids.push(post.id);
    groups.set(key, group);
    if (status in STATUS_EVENTS && post.status !== status) reached.push({ post, status: status as keyof typeof STATUS_EVENTS, errorMessage });
    if (status === "unconfirmed" && post.status !== status) await noticePostUnconfirmed(tx, now, post, errorMessage);
  }
  for (const g of groups.values()) {
    await tx.update(scheduledPosts).set({ status: g.status, errorMessage: g.errorMessage, updatedAt: now }).where(inArray(scheduledPosts.id, g.ids)).run();
  }
  if (reached.length === 0) return statuses;
  for (const { post, status } of reached) if (status in FINAL_EVENTS) await postEnded(tx, now, post, "final");
  // Events only for accounts with an event webhook at all (recordEvent checks the types): one read for the batch.
  // A failed or partly failed post is a notice to the account's people whatever its webhooks (store/notices.ts).
  const accountIds = [...new Set(reached.map((f) => f.post.accountId))];
  const hooked = new Set(
    (await tx.selectDistinct({ accountId: eventWebhooks.accountId }).from(eventWebhooks).where(inArray(eventWebhooks.accountId, accountIds)).all()).map(
      (h) => h.accountId,
    ),
  );
  for (const { post, status, errorMessage } of reached) {
    if (status === "failed" || status === "partially_failed") await noticePostFailed(tx, now, post, errorMessage, status === "partially_failed");
    if (!hooked.has(post.accountId)) continue;
    const targets = targetsOf.get(post.id) ?? [];
    await recordEvent(tx, now, post.accountId, STATUS_EVENTS[status], () => ({ post: postToApi({ ...post, status, errorMessage, updatedAt: now }, targets) }));
  }
  return statuses;
}

/**
 * Marks `postIds` as publishing: right after a claim, whose claimed target is publishing, the status refreshPostStatus
 * would derive (a publishing target outranks every other), so there is nothing to read. One statement; on PostgreSQL
 * it locks the rows in id order first (a locking subquery), as every refresh does.
 */
export async function markPostsPublishing(tx: StoreDb, postIds: readonly string[], now: number): Promise<void> {
  if (postIds.length === 0) return;
  const ids = [...new Set(postIds)].sort();
  const values = { status: "publishing" as const, errorMessage: null, updatedAt: now };
  if (tablesDialect() !== "postgres") {
    await tx.update(scheduledPosts).set(values).where(inArray(scheduledPosts.id, ids)).run();
    return;
  }
  const lock = tx.select({ id: scheduledPosts.id }).from(scheduledPosts).where(inArray(scheduledPosts.id, ids)).orderBy(scheduledPosts.id);
  const locked = (lock as unknown as { for(strength: "update"): typeof lock }).for("update");
  await tx.update(scheduledPosts).set(values).where(inArray(scheduledPosts.id, locked)).run();
}
