/**
 * Approval (decisions.md §14): when the account's `approvalRequired` is on, a post scheduled by an editor (a key
 * minted by an editor, an editor's MCP grant, or an editor's dashboard session: the role is read at every request) is
 * stored `pending_approval`, post and targets, and the dispatcher never claims it (it claims only scheduled targets).
 * An owner approves it (it becomes scheduled and goes out at its time) or rejects it (failed, "Rejected: <note>");
 * a post still waiting when its time comes fails with "Not approved before its time." (the expiry job, and any
 * approve of an overdue post). Events `post.needs_approval`, `post.approved`, `post.rejected`; the expiry is a
 * `post.failed`. Owners get a `post_awaiting_approval` notice; editors hear of a rejection or expiry through the
 * failed-post notice.
 *
 * A held target's next_attempt_at is the post's time, so the expiry finds overdue posts through the targets'
 * (status, next_attempt_at) index; approving sets it as insertTargets would (now for a provider-held target, which
 * is then handed over at once).
 */
import { and, asc, eq, inArray, lte } from "drizzle-orm";
import type { Role } from "../../auth/scopes";
import type { StoreDb } from "../../db/store";
import { accounts, postSeries, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { heldContentFor } from "../../publishing/content";
import { runDueOnce } from "../../publishing/dispatcher";
import { type PostApi, postToApi } from "../../publishing/post-view";
import { connectorFor } from "../../publishing/registry";
import { recordEvent } from "../../store/events";
import { noticePostFailed, recordAccountNotice } from "../../store/notices";
import { assertOwner } from "../accounts/settings";
import { isPlatform } from "../connections/service";
import type { Placement } from "./service";

/** The errorMessage of a post still waiting for approval when its time came (decisions.md §14). */
export const NOT_APPROVED_IN_TIME = "Not approved before its time.";
/** What a rejection's errorMessage starts with; the owner's note follows. */
export const REJECTED_PREFIX = "Rejected: ";
/** The errorMessage's note when the owner gave none. */
export const NO_NOTE = "no note given.";
/** Longest rejection note, in characters after trimming. */
export const NOTE_MAX = 500;
/** Posts failed per expiry pass (the job runs every minute; a backlog drains over passes). */
const EXPIRY_BATCH = 200;

/** Who schedules or decides: the account and the member's current role (a key's, grant's or session's). */
export interface ApprovalCaller {
  accountId: string;
  role: Role;
}

type PostRow = typeof scheduledPosts.$inferSelect;
type TargetRow = typeof scheduledPostTargets.$inferSelect;

async function postAndTargets(tx: StoreDb, postId: string): Promise<{ post: PostRow; targets: TargetRow[] } | null> {
  const post = await tx.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get();
  if (!post) return null;
  const targets = await tx
    .select()
    .from(scheduledPostTargets)
    .where(eq(scheduledPostTargets.postId, postId))
    .orderBy(asc(scheduledPostTargets.createdAt), asc(scheduledPostTargets.id))
    .all();
  return { post, targets };
}

function captionLine(caption: string): string {
  const flat = caption.replace(/\s+/g, " ").trim();
  if (flat === "") return "a post without a caption";
  return flat.length <= 60 ? flat : `${flat.slice(0, 59).trimEnd()}…`;
}

/**
 * The caller a post stands for when no person scheduled it (a feed in `queue` mode): held like an editor's, so an
 * account that requires approval never publishes anything an owner did not write or approve.
 */
export function automaticCaller(accountId: string): ApprovalCaller {
  return { accountId, role: "editor" };
}

/**
 * Inside the write that stored post `postId` with scheduled targets: holds it for approval (post and targets
 * `pending_approval`, the targets due at the post's time so the expiry finds them), records `post.needs_approval`
 * and the owners' notice. Also used by a repeat whose waiting occurrence was cancelled (the next one waits too).
 */
export async function holdForApproval(tx: StoreDb, postId: string, now: number): Promise<void> {
  const post = await holdTargets(tx, postId, now);
  if (!post) return;
  const held = await postAndTargets(tx, postId);
  if (!held) return;
  await recordEvent(tx, now, post.accountId, "post.needs_approval", () => ({ post: postToApi(held.post, held.targets) }));
  await recordAccountNotice(tx, now, {
    kind: "post_awaiting_approval",
    accountId: post.accountId,
    title: `A post waits for your approval: “${captionLine(post.caption)}”`,
    path: "/dashboard/approvals",
  });
}

/**
 * Marks post `postId` and its scheduled targets `pending_approval` (the targets due at the post's time), inside the
 * caller's write, without an event: also what a reschedule of a waiting post uses to keep it waiting. Answers the post.
 */
export async function holdTargets(tx: StoreDb, postId: string, now: number): Promise<PostRow | null> {
  const post = await tx
    .update(scheduledPosts)
    .set({ status: "pending_approval", updatedAt: now })
    .where(eq(scheduledPosts.id, postId))
    .returning()
    .get();
  if (!post) return null;
  await tx
    .update(scheduledPostTargets)
    .set({ status: "pending_approval", nextAttemptAt: post.scheduledTime, updatedAt: now })
    .where(and(eq(scheduledPostTargets.postId, postId), eq(scheduledPostTargets.status, "scheduled")))
    .run();
  return post;
}

/**
 * The placement of a post scheduled by `caller`: the same as `base`, and, when the caller is not an owner and the
 * account requires approval (read inside the write that stores the post, so a change of the setting is either
 * before or after it), the post is held for approval in that write.
 */
export function approvalPlacement(deps: Pick<Deps, "clock">, caller: ApprovalCaller, base: Placement): Placement {
  if (caller.role === "owner") return base;
  return {
    ...base,
    async stored(tx, post) {
      await base.stored?.(tx, post);
      const account = await tx.select({ approvalRequired: accounts.approvalRequired }).from(accounts).where(eq(accounts.id, caller.accountId)).get();
      if (account?.approvalRequired) await holdForApproval(tx, post.id, deps.clock.now());
    },
  };
}

/** True when a post `caller` schedules or changes must wait for an owner: not an owner, and the account requires approval. */
export async function needsApproval(db: StoreDb, caller: ApprovalCaller): Promise<boolean> {
  if (caller.role === "owner") return false;
  const account = await db.select({ approvalRequired: accounts.approvalRequired }).from(accounts).where(eq(accounts.id, caller.accountId)).get();
  return account?.approvalRequired === true;
}

/** A repeat series whose current occurrence `postId` was refused (rejected, or not approved in time) ends with it. */
async function endSeriesOf(tx: StoreDb, postId: string, now: number): Promise<void> {
  await tx.update(postSeries).set({ currentPostId: null, endedAt: now }).where(eq(postSeries.currentPostId, postId)).run();
}

/**
 * Fails a waiting post with `errorMessage` (post and targets), if it is still waiting: a conditional update, so an
 * approve, a reject and the expiry racing for one post change it once. Answers the failed post, or null.
 */
async function failWaiting(tx: StoreDb, postId: string, errorMessage: string, now: number, onlyIfDue: boolean): Promise<{ post: PostRow; targets: TargetRow[] } | null> {
  const changed = await tx
    .update(scheduledPosts)
    .set({ status: "failed", errorMessage, updatedAt: now })
    .where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.status, "pending_approval"), onlyIfDue ? lte(scheduledPosts.scheduledTime, now) : undefined))
    .returning({ id: scheduledPosts.id })
    .all();
  if (changed.length === 0) return null;
  await tx
    .update(scheduledPostTargets)
    .set({ status: "failed", errorMessage, nextAttemptAt: null, updatedAt: now })
    .where(and(eq(scheduledPostTargets.postId, postId), eq(scheduledPostTargets.status, "pending_approval")))
    .run();
  await endSeriesOf(tx, postId, now);
  return postAndTargets(tx, postId);
}

/**
 * Fails every post still waiting for approval whose time has come ("Not approved before its time."), with a
 * `post.failed` event and the failed-post notice, each in its own write. `onlyPostId` limits it to one post (an
 * approve of an overdue post). Answers how many failed. Run every minute by the expiry job.
 */
export async function expireUnapproved(deps: Pick<Deps, "store" | "clock">, onlyPostId?: string): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.store.db
    .selectDistinct({ postId: scheduledPostTargets.postId })
    .from(scheduledPostTargets)
    .where(
      and(
        eq(scheduledPostTargets.status, "pending_approval"),
        lte(scheduledPostTargets.nextAttemptAt, now),
        onlyPostId === undefined ? undefined : eq(scheduledPostTargets.postId, onlyPostId),
      ),
    )
    .limit(EXPIRY_BATCH)
    .all();
  let failed = 0;
  for (const { postId } of due) {
    const done = await deps.store.write(async (tx) => {
      const result = await failWaiting(tx, postId, NOT_APPROVED_IN_TIME, now, true);
      if (!result) return false;
      const api = postToApi(result.post, result.targets);
      await recordEvent(tx, now, result.post.accountId, "post.failed", () => ({ post: api }));
      await noticePostFailed(tx, now, result.post, NOT_APPROVED_IN_TIME, false);
      return true;
    });
    if (done) failed++;
  }
  return failed;
}

/** 404 for a post of another account or none; 409 not_pending_approval (with its status) for one not waiting. */
async function notWaiting(deps: Pick<Deps, "store">, accountId: string, postId: string): Promise<AppError> {
  const post = await deps.store.db
    .select({ status: scheduledPosts.status, errorMessage: scheduledPosts.errorMessage })
    .from(scheduledPosts)
    .where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.accountId, accountId)))
    .get();
  if (!post) return notFound("scheduled post");
  const why = post.errorMessage ? `: ${post.errorMessage}` : "";
  return new AppError("not_pending_approval", `This post is not waiting for approval (it is ${post.status}${why}).`, { status: post.status });
}

/**
 * POST /schedule/{id}/approve: an owner approves a waiting post; it becomes scheduled and goes out at its time
 * (provider-held targets are handed over at once, as POST /schedule does). A post whose time passed while it waited
 * is failed first ("Not approved before its time.") and the answer is 409 not_pending_approval, like any post not
 * waiting. 403 forbidden (requiredRole owner) for anyone else; 404 for an unknown post.
 */
export async function approvePost(deps: Deps, caller: ApprovalCaller, postId: string): Promise<{ post: PostApi }> {
  assertOwner(caller.role, "approve posts");
  if (!isUuid(postId)) throw notFound("scheduled post");
  await expireUnapproved(deps, postId);
  const now = deps.clock.now();
  const handOver = await deps.store.write(async (tx) => {
    const post = await tx
      .update(scheduledPosts)
      .set({ status: "scheduled", updatedAt: now })
      .where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.accountId, caller.accountId), eq(scheduledPosts.status, "pending_approval")))
      .returning()
      .get();
    if (!post) return null;
    const held = await tx
      .select()
      .from(scheduledPostTargets)
      .where(and(eq(scheduledPostTargets.postId, postId), eq(scheduledPostTargets.status, "pending_approval")))
      .all();
    const native: string[] = [];
    for (const target of held) {
      const holds = isPlatform(target.platform) && connectorFor(target.platform).holdsNatively(post.scheduledTime, now, heldContentFor(post, target.platform));
      if (holds) native.push(target.id);
    }
    await tx
      .update(scheduledPostTargets)
      .set({ status: "scheduled", nextAttemptAt: post.scheduledTime, updatedAt: now })
      .where(inArray(scheduledPostTargets.id, held.map((t) => t.id)))
      .run();
    if (native.length > 0) await tx.update(scheduledPostTargets).set({ nextAttemptAt: now }).where(inArray(scheduledPostTargets.id, native)).run();
    const after = await postAndTargets(tx, postId);
    if (after) await recordEvent(tx, now, caller.accountId, "post.approved", () => ({ post: postToApi(after.post, after.targets) }));
    return native;
  });
  if (handOver === null) throw await notWaiting(deps, caller.accountId, postId);
  if (handOver.length > 0) await runDueOnce(deps, {}, handOver);
  return { post: await postView(deps, postId) };
}

async function postView(deps: Pick<Deps, "store">, postId: string): Promise<PostApi> {
  const found = await postAndTargets(deps.store.db, postId);
  if (!found) throw notFound("scheduled post");
  return postToApi(found.post, found.targets);
}

/** A rejection note as the API takes it: trimmed, at most NOTE_MAX characters; empty or absent → null. */
function cleanNote(note: string | undefined): string | null {
  if (note === undefined) return null;
  const trimmed = note.trim();
  if (trimmed.length > NOTE_MAX) throw invalidField("note", `must be at most ${NOTE_MAX} characters`);
  return trimmed === "" ? null : trimmed;
}

/** The errorMessage of a rejected post: "Rejected: <note>" (decisions.md §14). */
function rejectedMessage(note: string | null): string {
  return `${REJECTED_PREFIX}${note ?? NO_NOTE}`;
}

/**
 * POST /schedule/{id}/reject `{note?}`: an owner rejects a waiting post; it becomes failed with errorMessage
 * "Rejected: <note>" (its targets too), `post.rejected` is recorded, and the account's people get the failed-post
 * notice (so the editor hears of it). A repeat whose occurrence is rejected ends. 409 not_pending_approval for a post
 * not waiting; 403 forbidden (requiredRole owner) for anyone else; 404 for an unknown post.
 */
export async function rejectPost(deps: Deps, caller: ApprovalCaller, postId: string, input: { note?: string }): Promise<{ post: PostApi }> {
  assertOwner(caller.role, "reject posts");
  const message = rejectedMessage(cleanNote(input.note));
  if (!isUuid(postId)) throw notFound("scheduled post");
  const now = deps.clock.now();
  const rejected = await deps.store.write(async (tx) => {
    const owned = await tx
      .select({ id: scheduledPosts.id })
      .from(scheduledPosts)
      .where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.accountId, caller.accountId)))
      .get();
    if (!owned) return null;
    const result = await failWaiting(tx, postId, message, now, false);
    if (!result) return null;
    const api = postToApi(result.post, result.targets);
    await recordEvent(tx, now, caller.accountId, "post.rejected", () => ({ post: api, note: message.slice(REJECTED_PREFIX.length) }));
    await noticePostFailed(tx, now, result.post, message, false);
    return api;
  });
  if (rejected === null) throw await notWaiting(deps, caller.accountId, postId);
  return { post: rejected };
}
