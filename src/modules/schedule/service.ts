/**
 * Scheduling (decisions.md §7, §10): the targets list, scheduling a creation to connected accounts, reschedule,
 * cancel, and the calendar reads. The post stores a snapshot of the creation (caption, alt text, image asset id);
 * the dispatcher (src/publishing/dispatcher.ts) delivers what the service holds, Mastodon holds its own scheduled
 * statuses.
 */
import { and, count, desc, eq, gte, inArray, lt, or, sql } from "drizzle-orm";
import type { CreationRow } from "../../db/schema";
import type { StoredImage } from "../../db/schema/post-content";
import type { PostStatus } from "../../db/schema/scheduled-posts";
import type { StoreDb } from "../../db/store";
import { connections, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { parseRfc3339 } from "../../lib/rfc3339";
import { runDueOnce } from "../../publishing/dispatcher";
import { type StoredContent, assetIdsOf, heldContentFor, loadDeliveryContent } from "../../publishing/content";
import { DELIVERY_OUTCOME, recordDeliveryOutcome } from "../../publishing/delivery-metrics";
import { postEnded, refreshPostStatus } from "../../publishing/post-status";
import { type PostApi, postToApi } from "../../publishing/post-view";
import { recordEvent } from "../../store/events";
import { withdrawPendingTargets } from "../../publishing/withdraw";
import { connectorFor } from "../../publishing/registry";
import { decodeCursor, encodeCursor } from "../assets/cursor";
import { registerAssetReferenceCheck } from "../assets/references";
import { connectionView, listConnections, signInExpiry } from "../connections/service";
import { type ConnectionMeta, type ConnectionRow, openConnection } from "../../store/connections";
import { cleanAltText, cleanHandCaption } from "../creations/content-input";
import { jsonHoldsString } from "../../db/portable-sql";
import { lockAssets } from "../creations/content-input";
import { findCreationRow } from "../creations/service";
import { type ApprovalCaller, holdForApproval, holdTargets, needsApproval } from "./approval";
import { type FitProblem, type FitTarget, imageFacts, postProblems, targetProblems } from "./fit";
import { LIST_LIMIT_DEFAULT, type RescheduleBody } from "./model";

/** Minimum lead time of POST /schedule. */
export const MIN_LEAD_MS = 5 * 60 * 1000;
/** The dashboard page where connections are managed. */
export const MANAGE_PATH = "/dashboard/connections";
/** How long after its time a provider-held post is first checked for publication. */
export const CONFIRM_DELAY_MS = 60_000;
const PENDING_TARGET = ["scheduled", "publishing"] as const;

type PostRow = typeof scheduledPosts.$inferSelect;
type TargetRow = typeof scheduledPostTargets.$inferSelect;

export type { PostApi, PostTargetApi } from "../../publishing/post-view";

// An asset blocks deletion only while a post that still has something to deliver uses it (the snapshot's
// image_asset_id, or any of its images, thread parts' images or versions' images).
registerAssetReferenceCheck("scheduled_posts", async (deps, assetId) => ((await assetReferencedByPendingPost(deps, assetId)) ? 1 : 0));

/** True while a post with a pending (scheduled or publishing) target uses `assetId` anywhere in its snapshot. */
export async function assetReferencedByPendingPost(deps: Pick<Deps, "store">, assetId: string): Promise<boolean> {
  const row = await deps.store.db
    .select({ id: scheduledPosts.id })
    .from(scheduledPosts)
    .innerJoin(scheduledPostTargets, eq(scheduledPostTargets.postId, scheduledPosts.id))
    .where(
      and(
        or(
          eq(scheduledPosts.imageAssetId, assetId),
          jsonHoldsString(scheduledPosts.images, assetId),
          jsonHoldsString(scheduledPosts.thread, assetId),
          jsonHoldsString(scheduledPosts.variants, assetId),
        ),
        inArray(scheduledPostTargets.status, PENDING_TARGET),
      ),
    )
    .limit(1)
    .get();
  return row !== undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Rows (a post as the API shows it: publishing/post-view.ts)

async function targetsOf(deps: Pick<Deps, "store">, postIds: string[]): Promise<Map<string, TargetRow[]>> {
  const byPost = new Map<string, TargetRow[]>();
  if (postIds.length === 0) return byPost;
  const rows = await deps.store.db
    .select()
    .from(scheduledPostTargets)
    .where(inArray(scheduledPostTargets.postId, postIds))
    .orderBy(scheduledPostTargets.createdAt, scheduledPostTargets.id)
    .all();
  for (const row of rows) byPost.set(row.postId, [...(byPost.get(row.postId) ?? []), row]);
  return byPost;
}

async function findPost(deps: Pick<Deps, "store">, accountId: string, postId: string): Promise<PostRow | null> {
  if (!isUuid(postId)) return null;
  return (await deps.store.db.select().from(scheduledPosts).where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.accountId, accountId))).get()) ?? null;
}

// ---------------------------------------------------------------------------------------------------------------
// Targets

/** GET /schedule/targets: every connection, ready or not, and where to manage them. */
export async function listTargets(deps: Deps, accountId: string): Promise<{ targets: (ReturnType<typeof connectionView> & { expiresAt: string | null })[]; manageUrl: string }> {
  const rows = await listConnections(deps, accountId);
  return {
    targets: rows.map((row) => {
      const ends = signInExpiry(deps, row);
      return { ...connectionView(row), expiresAt: ends === null ? null : isoAt(ends) };
    }),
    manageUrl: `${deps.config.baseUrl}${MANAGE_PATH}`,
  };
}

/** Resolves the request's target names (platform or accountId) to connections. Throws the 400s of §7. */
export function resolveTargets(all: ConnectionRow[], names: readonly string[]): ConnectionRow[] {
  const chosen = new Map<string, ConnectionRow>();
  for (const name of names) {
    const byId = all.find((c) => c.id === name);
    if (byId) {
      chosen.set(byId.id, byId);
      continue;
    }
    const byPlatform = all.filter((c) => c.platform === name.trim().toLowerCase());
    if (byPlatform.length === 0) {
      throw new AppError("unknown_target", `No connected account matches "${name}". Use a platform or an accountId from GET /api/v1/schedule/targets.`, {
        target: name,
      });
    }
    if (byPlatform.length > 1) {
      throw new AppError("ambiguous_target", `More than one ${name} account is connected; name one by its accountId.`, {
        target: name,
        accountIds: byPlatform.map((c) => c.id),
      });
    }
    chosen.set(byPlatform[0]!.id, byPlatform[0]!);
  }
  return [...chosen.values()];
}

// ---------------------------------------------------------------------------------------------------------------
// Schedule

export interface ScheduleInput {
  creationId: string;
  /** RFC 3339; unused when the caller passes a Placement (the queue). */
  scheduledTime?: string;
  targets: readonly string[];
}

/** Parses an RFC 3339 scheduled_time (any offset); 400 invalid_request when it is not one. */
function parseScheduledTime(value: string): number {
  const ms = parseRfc3339(value);
  if (ms === null) {
    throw invalidField("scheduled_time", "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z or 2026-11-22T11:00:00+01:00");
  }
  return ms;
}

/** 400 scheduled_time_too_soon unless `scheduledTime` is at least MIN_LEAD_MS ahead of `now`. */
function assertLeadTime(scheduledTime: number, now: number): void {
  if (scheduledTime < now + MIN_LEAD_MS) {
    throw new AppError("scheduled_time_too_soon", "scheduled_time must be at least 5 minutes ahead.", { earliestAllowed: isoAt(now + MIN_LEAD_MS) });
  }
}

/** A connection as the fit checks see it: what its network takes and its caption limit. */
export function fitTargetOf(deps: Deps, connection: ConnectionRow): FitTarget {
  const open = openConnection(deps, connection);
  const connector = connectorFor(connection.platform);
  return {
    accountId: connection.id,
    platform: connection.platform,
    label: connection.label,
    capabilities: connector.capabilities(open),
    captionLimit: connector.captionLimit(open),
    // Telegram: 1,024 characters with media, 4,096 without; per part.
    captionLimitFor: (images: number) => connector.captionLimit(open, { images }),
  };
}

/**
 * The 409s of scheduling `content` (a creation, or a post's snapshot) to `chosen`: target_not_ready with its
 * blockedReason; not_schedulable with `problems`, each naming the target and the part that does not fit (fit.ts):
 * no caption, a caption, thread part or first comment over a target's limit, too many images or an image type the
 * network cannot send, a thread or a first comment where the network has none, no image where one is required, an
 * image gone from the library.
 */
async function assertSchedulable(deps: Deps, chosen: readonly ConnectionRow[], content: StoredContent): Promise<void> {
  const notReady = chosen.find((c) => !c.readyToPost);
  if (notReady) {
    throw new AppError("target_not_ready", `${notReady.label} cannot post right now: ${notReady.blockedReason ?? "it needs attention"}`, {
      accountId: notReady.id,
      platform: notReady.platform,
      blockedReason: notReady.blockedReason ?? "The connection needs attention.",
    });
  }
  const facts = await imageFacts(deps, content);
  const problems: FitProblem[] = postProblems(content, facts);
  if (content.caption.trim() !== "") {
    for (const connection of chosen) problems.push(...targetProblems(fitTargetOf(deps, connection), content, facts));
  }
  if (problems.length > 0) {
    throw new AppError("not_schedulable", `The creation cannot be scheduled: ${problems.map((p) => p.problem).join("; ")}.`, { problems });
  }
}

/**
 * The rows of one pending target per connection of a post due at `scheduledTime`, and the ids of the targets a
 * provider will hold (handed over at once by the caller, after the commit).
 */
export function targetRowsOf(
  post: { id: string; accountId: string } & Pick<StoredContent, "thread" | "firstComment" | "variants">,
  chosen: readonly ConnectionRow[],
  scheduledTime: number,
  now: number,
): { rows: (typeof scheduledPostTargets.$inferInsert)[]; handOver: string[] } {
  const handOver: string[] = [];
  const rows = chosen.map((connection) => {
    const id = newId();
    // A server known to ignore `scheduled_at` (meta.nativeScheduling false, networks/mastodon/server.ts) is held here.
    const native =
      connectorFor(connection.platform).holdsNatively(scheduledTime, now, heldContentFor(post, connection.platform)) &&
      (JSON.parse(connection.meta) as ConnectionMeta).nativeScheduling !== false;
    if (native) handOver.push(id);
    return {
      id,
      postId: post.id,
      accountId: post.accountId,
      connectionId: connection.id,
      platform: connection.platform,
      label: connection.label,
      status: "scheduled" as const,
      nextAttemptAt: native ? now : scheduledTime,
      createdAt: now,
      updatedAt: now,
    };
  });
  return { rows, handOver };
}

/**
 * Inserts one pending target per connection of a post due at `scheduledTime`, inside the caller's transaction.
 * Answers the ids of the targets a provider will hold (handed over at once by the caller, after the commit).
 */
export async function insertTargets(
  tx: StoreDb,
  post: { id: string; accountId: string } & Pick<StoredContent, "thread" | "firstComment" | "variants">,
  chosen: readonly ConnectionRow[],
  scheduledTime: number,
  now: number,
): Promise<string[]> {
  const { rows, handOver } = targetRowsOf(post, chosen, scheduledTime, now);
  for (const row of rows) await tx.insert(scheduledPostTargets).values(row).run();
  return handOver;
}

/** How often schedulePost reads and checks the creation again when its image was deleted since the last read. */
const SNAPSHOT_ATTEMPTS = 3;

/**
 * Where a new post goes in time, and what else its row says. POST /schedule's own is a fixed time (`atTime`); the
 * queue chooses the first free slot inside the write that stores the post (modules/schedule/queue.ts), so the choice
 * and the row it makes are one transaction; a repeat adds its series (repeat.ts).
 */
export interface Placement {
  /** The post's time (at least MIN_LEAD_MS ahead), decided inside the write transaction that stores the post. */
  time(tx: StoreDb, chosen: readonly ConnectionRow[], now: number): Promise<number>;
  /** Columns of the post row besides the snapshot: queued (took a posting slot), seriesId (an occurrence of a repeat). */
  columns: { queued: boolean; seriesId: string | null };
  /** Runs in the same write once the post and its targets are stored. */
  stored?(tx: StoreDb, post: { id: string; scheduledTime: number }): Promise<void>;
}

/** The placement of a post at a fixed time (checked for the 5-minute lead before anything is read). */
export function atTime(scheduledTime: number, now: number, columns: Placement["columns"] = { queued: false, seriesId: null }): Placement {
  assertLeadTime(scheduledTime, now);
  return { time: async () => scheduledTime, columns };
}

/** Parses POST /schedule's scheduled_time (RFC 3339, any offset) and checks its lead: 400 invalid_request or scheduled_time_too_soon. */
export function scheduledTimeOf(value: string, now: number): number {
  const ms = parseScheduledTime(value);
  assertLeadTime(ms, now);
  return ms;
}

/**
 * POST /schedule. Checks in the order of decisions.md §1, stores the post with its content snapshot, then hands
 * provider-held targets (Mastodon) over at once: a provider's refusal answers 200 with that target failed. Without a
 * `placement`, the post goes at `input.scheduledTime`.
 */
export async function schedulePost(deps: Deps, accountId: string, input: ScheduleInput, placement?: Placement): Promise<{ post: PostApi }> {
  const now = deps.clock.now();
  const place = placement ?? atTime(parseScheduledTime(input.scheduledTime ?? ""), now);
  const chosen = resolveTargets(await listConnections(deps, accountId), input.targets);
  const postId = newId();
  let handOver: string[] | null = null;
  for (let attempt = 1; handOver === null; attempt++) {
    if (attempt > SNAPSHOT_ATTEMPTS) {
      const problem = "the creation's images changed while it was being scheduled; try again";
      throw new AppError("not_schedulable", `The creation cannot be scheduled: ${problem}.`, { problems: [{ field: "image", problem }] });
    }
    const creation = await findCreationRow(deps, accountId, input.creationId);
    if (!creation) throw notFound("creation");
    await assertSchedulable(deps, chosen, creation);
    handOver = await insertPost(deps, { id: postId, accountId, now }, creation, chosen, place);
  }
  if (handOver.length > 0) await runDueOnce(deps, {}, handOver);
  return { post: (await getPost(deps, accountId, postId)).post };
}

/** The row of a new post: the snapshot of `creation`, due at `post.scheduledTime`. */
export function postRowOf(
  post: { id: string; accountId: string; scheduledTime: number; now: number },
  creation: CreationRow,
  columns: Placement["columns"],
): typeof scheduledPosts.$inferInsert {
  return {
    id: post.id,
    accountId: post.accountId,
    creationId: creation.id,
    scheduledTime: post.scheduledTime,
    status: "scheduled",
    caption: creation.caption,
    altText: creation.altText,
    imageAssetId: creation.imageAssetId,
    images: creation.images,
    thread: creation.thread,
    firstComment: creation.firstComment,
    variants: creation.variants,
    ...columns,
    createdAt: post.now,
    updatedAt: post.now,
  };
}

/**
 * Stores the post with the snapshot of `creation` (read and checked before this write) and its targets, at the time
 * `placement` chooses in this write. Answers the
 * targets to hand over, or null when the snapshot's image is gone: the creation's image was replaced and the old one
 * deleted after the read (the caller reads the creation again). The image is locked for the write, so a delete of it
 * waits for this write and then finds the post using it (asset_in_use).
 */
async function insertPost(
  deps: Deps,
  post: { id: string; accountId: string; now: number },
  creation: CreationRow,
  chosen: readonly ConnectionRow[],
  placement: Placement,
): Promise<string[] | null> {
  const { id: postId, accountId, now } = post;
  return deps.store.write(async (tx) => {
    if (!(await lockAssets(deps, accountId, assetIdsOf(creation)))) return null;
    const scheduledTime = await placement.time(tx, chosen, now);
    await tx.insert(scheduledPosts).values(postRowOf({ id: postId, accountId, scheduledTime, now }, creation, placement.columns)).run();
    const snapshot = { id: postId, accountId, thread: creation.thread, firstComment: creation.firstComment, variants: creation.variants };
    const handOver = await insertTargets(tx, snapshot, chosen, scheduledTime, now);
    await placement.stored?.(tx, { id: postId, scheduledTime });
    return handOver;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Reads

/** GET /schedule/posts/{id}. */
export async function getPost(deps: Pick<Deps, "store">, accountId: string, postId: string): Promise<{ post: PostApi }> {
  const post = await findPost(deps, accountId, postId);
  if (!post) throw notFound("scheduled post");
  return { post: postToApi(post, (await targetsOf(deps, [post.id])).get(post.id) ?? []) };
}

export interface ListPostsQuery {
  from?: string;
  to?: string;
  status?: PostStatus;
  limit?: number;
  cursor?: string;
}

function parseBound(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseRfc3339(value);
  if (ms === null) throw invalidField(field, "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z or 2026-11-22T11:00:00+01:00");
  return ms;
}

/** GET /schedule/posts: newest first, `from`/`to` bound scheduledTime, optional status filter. */
export async function listPosts(
  deps: Pick<Deps, "store">,
  accountId: string,
  query: ListPostsQuery,
): Promise<{ posts: PostApi[]; nextCursor: string | null }> {
  const from = parseBound("from", query.from);
  const to = parseBound("to", query.to);
  const limit = query.limit ?? LIST_LIMIT_DEFAULT;
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const rows = await deps.store.db
    .select()
    .from(scheduledPosts)
    .where(
      and(
        eq(scheduledPosts.accountId, accountId),
        from === undefined ? undefined : gte(scheduledPosts.scheduledTime, from),
        to === undefined ? undefined : lt(scheduledPosts.scheduledTime, to),
        query.status === undefined ? undefined : eq(scheduledPosts.status, query.status),
        after === undefined
          ? undefined
          : or(lt(scheduledPosts.createdAt, after.createdAt), and(eq(scheduledPosts.createdAt, after.createdAt), lt(scheduledPosts.id, after.id))),
      ),
    )
    .orderBy(desc(scheduledPosts.createdAt), desc(scheduledPosts.id))
    .limit(limit + 1)
    .all();
  const page = rows.slice(0, limit);
  const targets = await targetsOf(deps, page.map((p) => p.id));
  const last = page[page.length - 1];
  return {
    posts: page.map((p) => postToApi(p, targets.get(p.id) ?? [])),
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Cancel

function distributionFailed(message: string): AppError {
  return new AppError("distribution_failed", message, { retryable: true });
}

/**
 * DELETE /schedule/{id}: withdraws every pending target, then removes the row. Every pending target is first
 * claimed with a lease (so the dispatcher and the confirmation job keep off it); a target whose earlier attempt had
 * an unknown outcome is reconciled with its provider first. Provider unreachable: 502 distribution_failed
 * (retryable), the row kept, targets already withdrawn remembered. A published target, or an unconfirmed one (it may
 * be published): 409 already_published.
 */
export async function cancelPost(deps: Deps, accountId: string, postId: string): Promise<{ id: string; cancelled: true; providerPostWithdrawn: boolean }> {
  const post = await findPost(deps, accountId, postId);
  if (!post) throw notFound("scheduled post");
  const targets = (await targetsOf(deps, [post.id])).get(post.id) ?? [];
  if (targets.some((t) => t.status === "published")) {
    throw new AppError("already_published", "This post was already published; it can no longer be cancelled.");
  }
  // An unconfirmed target may be on the network already: deleting the post would lose the only record of it.
  const unsure = targets.find((t) => t.status === "unconfirmed");
  if (unsure) {
    throw new AppError(
      "already_published",
      `This post may already be on ${unsure.label}: answer “It was posted” or “Send again” first; it can no longer be cancelled.`,
    );
  }
  const pending = targets.filter((t) => t.status === "scheduled" || t.status === "publishing");
  // The post as the client last saw it, for the post.cancelled event (withdrawing changes the targets' rows).
  const before = postToApi(post, targets);
  await withdrawPendingTargets(deps, pending, {
    busy: () => distributionFailed("A delivery of this post is in progress right now; try the cancel again in a moment."),
    failed: (target, why) => distributionFailed(`Could not withdraw the post from ${target.label}: ${why} The post is kept; try again.`),
    onPublished: (target) => {
      throw new AppError("already_published", `This post was already published to ${target.label}; it can no longer be cancelled.`);
    },
  });
  const withdrawnFromProvider = await deps.store.db
    .select({ n: count() })
    .from(scheduledPostTargets)
    .where(and(eq(scheduledPostTargets.postId, post.id), eq(scheduledPostTargets.status, "withdrawn"), eq(scheduledPostTargets.heldByProvider, true)))
    .get();
  const providerPostWithdrawn = (withdrawnFromProvider?.n ?? 0) > 0;
  await deps.store.write(async (tx) => {
    const stillPending = await tx
      .select({ id: scheduledPostTargets.id })
      .from(scheduledPostTargets)
      .where(and(eq(scheduledPostTargets.postId, post.id), inArray(scheduledPostTargets.status, ["scheduled", "publishing", "published"])))
      .all();
    if (stillPending.length > 0) throw distributionFailed("The post changed while it was being cancelled; try again.");
    await recordEvent(tx, deps.clock.now(), accountId, "post.cancelled", () => ({ post: before, providerPostWithdrawn }));
    // A cancelled occurrence of a repeat is skipped: its series schedules the next at once (repeat.ts), from this post's
    // snapshot and targets (so before the row goes).
    await postEnded(tx, deps.clock.now(), post, "cancelled");
    await tx.delete(scheduledPosts).where(eq(scheduledPosts.id, post.id)).run();
  });
  return { id: post.id, cancelled: true, providerPostWithdrawn };
}

// ---------------------------------------------------------------------------------------------------------------
// Reschedule

export interface RescheduleInput {
  scheduledTime?: string;
  targets?: readonly string[];
  /** New content for the post's snapshot (decisions.md §15); the creation does not change. */
  content?: { caption?: string; altText?: string };
}

/**
 * A PATCH body (the REST route's, or reschedule_post's arguments) as reschedulePost takes it: fields left out stay
 * out, and the content's `alt_text` or `altText` (the spelling of PATCH /creations/{id}) is its altText.
 */
export function rescheduleInputOf(body: RescheduleBody): RescheduleInput {
  return {
    ...(body.scheduled_time !== undefined ? { scheduledTime: body.scheduled_time } : {}),
    ...(body.targets !== undefined ? { targets: body.targets } : {}),
    ...(body.content !== undefined ? { content: contentEditOf(body.content) } : {}),
  };
}

function contentEditOf(content: NonNullable<RescheduleBody["content"]>): NonNullable<RescheduleInput["content"]> {
  const altText = content.alt_text ?? content.altText;
  return { ...(content.caption !== undefined ? { caption: content.caption } : {}), ...(altText !== undefined ? { altText } : {}) };
}

/** The snapshot a PATCH leaves: the post's own, with the content it sends replaced. */
interface Snapshot {
  caption: string;
  altText: string | null;
  imageAssetId: string | null;
}

/** `images` with the first image's alt text set to `altText` (images[0] mirrors the alt_text column: db/schema/post-content.ts). */
function imagesWithFirstAlt(images: readonly StoredImage[], altText: string | null): StoredImage[] {
  return images.map((image, i) => (i === 0 ? { ...image, altText } : image));
}

const DONE_STATUSES: readonly PostStatus[] = ["published", "partially_failed", "failed"];

/** The 409s of a post that may no longer move: done (already_published), or publishing (not_reschedulable). */
function assertReschedulable(post: PostRow, targets: readonly TargetRow[], now: number): void {
  if (DONE_STATUSES.includes(post.status) || targets.some((t) => t.status === "published")) {
    throw new AppError(
      "already_published",
      `This post has already gone out (${post.status}); it can no longer be rescheduled. Schedule the creation again with POST /api/v1/schedule.`,
    );
  }
  if (post.status === "publishing" || targets.some((t) => t.status === "publishing")) {
    throw new AppError("not_reschedulable", "This post is being published right now; it can no longer be rescheduled.");
  }
  if (post.scheduledTime <= now) {
    throw new AppError("not_reschedulable", "This post's time has come and publishing has started; it can no longer be rescheduled.");
  }
}

/**
 * Replaces the post's withdrawn targets (and, when `dropFailed`, its failed ones; or only the withdrawn `ids`) by fresh pending targets for
 * `chosen` at `scheduledTime`, in one write transaction that also moves the post. Fresh target ids mean fresh
 * Idempotency-Keys: a provider that absorbed the withdrawn one's key does not answer the new placement with it.
 * Answers the targets to hand over to their provider. 404 when the post was cancelled meanwhile.
 */
async function replaceTargets(
  deps: Deps,
  post: PostRow,
  chosen: readonly ConnectionRow[],
  scheduledTime: number,
  remove: { dropFailed: boolean } | { ids: readonly string[] },
  content?: Snapshot,
  reapprove = false,
): Promise<string[]> {
  const now = deps.clock.now();
  return deps.store.write(async (tx) => {
    const moved = await tx
      .update(scheduledPosts)
      .set({
        scheduledTime,
        // Moved to another time, a queued post leaves the queue and frees its slot (decisions.md §14).
        ...(scheduledTime !== post.scheduledTime ? { queued: false } : {}),
        updatedAt: now,
        ...(content
          ? {
              caption: content.caption,
              altText: content.altText,
              images: imagesWithFirstAlt(post.images, content.altText),
            }
          : {}),
      })
      .where(eq(scheduledPosts.id, post.id))
      .returning({ id: scheduledPosts.id })
      .all();
    if (moved.length === 0) throw notFound("scheduled post");
    // Targets held for approval were never handed to anyone: they are replaced like withdrawn ones.
    const replaced: TargetRow["status"][] = "dropFailed" in remove && remove.dropFailed ? ["withdrawn", "failed", "pending_approval"] : ["withdrawn", "pending_approval"];
    const only = "ids" in remove ? inArray(scheduledPostTargets.id, [...remove.ids]) : undefined;
    await tx
      .delete(scheduledPostTargets)
      .where(and(eq(scheduledPostTargets.postId, post.id), inArray(scheduledPostTargets.status, replaced), only))
      .run();
    const handOver = await insertTargets(tx, post, chosen, scheduledTime, now);
    // A post waiting for approval keeps waiting, at its new time (approval.ts); an approved post an editor changed
    // waits again. Nothing is handed over.
    if (post.status === "pending_approval" || reapprove) {
      if (post.status === "pending_approval") await holdTargets(tx, post.id, now);
      else await holdForApproval(tx, post.id, now);
      return [];
    }
    await refreshPostStatus(tx, post.id, now);
    return handOver;
  });
}

/** The connections of `targets` that still exist, in the targets' order (a removed connection has nothing to place). */
function connectionsOf(all: readonly ConnectionRow[], targets: readonly TargetRow[]): ConnectionRow[] {
  const byId = new Map(all.map((c) => [c.id, c]));
  const chosen = new Map<string, ConnectionRow>();
  for (const target of targets) {
    const connection = target.connectionId ? byId.get(target.connectionId) : undefined;
    if (connection) chosen.set(connection.id, connection);
  }
  return [...chosen.values()];
}

/**
 * The post's snapshot with `content` applied: the caption as written by hand (not empty, at most 63,206 characters),
 * the alt text only for a post with an image. Null when `content` changes nothing.
 */
function editedSnapshot(post: PostRow, content: RescheduleInput["content"]): Snapshot | null {
  if (content === undefined) return null;
  if (content.caption === undefined && content.altText === undefined) {
    throw invalidField("content", "must contain caption or alt_text");
  }
  const caption = content.caption === undefined ? post.caption : cleanHandCaption(content.caption, "content.caption");
  let altText = post.altText;
  if (content.altText !== undefined) {
    if (!post.imageAssetId) throw invalidField("content.alt_text", "cannot be set: the post has no image");
    altText = cleanAltText(content.altText, "content.alt_text");
  }
  if (caption === post.caption && altText === post.altText) return null;
  return { caption, altText, imageAssetId: post.imageAssetId };
}

/**
 * PATCH /schedule/{id}: moves a post that has not started publishing to another time and/or other targets, and/or
 * changes what it sends (`content`: the snapshot changes, the creation does not), under the rules of POST
 * (5-minute lead, targets resolved the same way, the same 409s, checked against the post's snapshot as it will be).
 * A content-only edit keeps the post's time, so it needs no new lead: it is allowed until publishing starts. Every pending target is withdrawn first (provider-held ones deleted at their provider) through the
 * cancel's withdraw, then fresh targets are placed and provider-held ones handed over again. Without `targets`, the
 * pending targets move; with them, the post's target set is replaced (its failed targets go too).
 *
 * If a provider cannot be reached while withdrawing: 502 distribution_failed (retryable) and the post stays as it
 * was: whatever was already withdrawn is placed again at the old time.
 */
export async function reschedulePost(
  deps: Deps,
  accountId: string,
  postId: string,
  input: RescheduleInput,
  caller?: ApprovalCaller,
): Promise<{ post: PostApi }> {
  if (input.scheduledTime === undefined && input.targets === undefined && input.content === undefined) {
    throw new AppError("invalid_request", "Send scheduled_time, targets, content or several of them.", {
      details: [{ field: "body", problem: "must contain scheduled_time, targets or content" }],
    });
  }
  const now = deps.clock.now();
  const newTime = input.scheduledTime === undefined ? undefined : parseScheduledTime(input.scheduledTime);
  if (newTime !== undefined) assertLeadTime(newTime, now);
  const all = await listConnections(deps, accountId);
  const requested = input.targets === undefined ? undefined : resolveTargets(all, input.targets);

  const post = await findPost(deps, accountId, postId);
  if (!post) throw notFound("scheduled post");
  const targets = (await targetsOf(deps, [post.id])).get(post.id) ?? [];
  assertReschedulable(post, targets, now);
  const content = editedSnapshot(post, input.content);
  const scheduledTime = newTime ?? post.scheduledTime;
  // Moving only the targets re-places them: the time they go out at must leave the same lead as POST.
  if (newTime !== undefined || requested !== undefined) assertLeadTime(scheduledTime, now);
  const chosen = requested ?? connectionsOf(all, targets.filter((t) => t.status === "scheduled" || t.status === "withdrawn" || t.status === "pending_approval"));
  if (chosen.length === 0) throw invalidField("targets", "the post has no target left to move; name at least one");
  await assertSchedulable(deps, chosen, content ? { ...post, caption: content.caption, images: imagesWithFirstAlt(post.images, content.altText) } : post);
  // Nothing to change (the same content, no time, no targets): the post as it is.
  if (content === null && newTime === undefined && requested === undefined) return getPost(deps, accountId, post.id);

  const pending = targets.filter((t) => t.status === "scheduled" || t.status === "publishing");
  try {
    await withdrawPendingTargets(deps, pending, {
      busy: () => new AppError("not_reschedulable", "A delivery of this post is in progress right now; it can no longer be rescheduled."),
      failed: (target, why) => distributionFailed(`Could not take the post back from ${target.label} to move it: ${why} Nothing changed; try again.`),
      onPublished: (target) => {
        throw new AppError("already_published", `This post was already published to ${target.label}; it can no longer be rescheduled.`);
      },
    });
  } catch (error) {
    await restoreWithdrawn(deps, accountId, post, pending);
    throw error;
  }
  // An editor who changes what an approved post sends, or where it goes, sends it back for approval (approval.ts).
  const reapprove = caller !== undefined && post.status === "scheduled" && (content !== null || requested !== undefined) && (await needsApproval(deps.store.db, caller));
  const handOver = await replaceTargets(deps, post, chosen, scheduledTime, { dropFailed: requested !== undefined }, content ?? undefined, reapprove);
  if (handOver.length > 0) await runDueOnce(deps, {}, handOver);
  return { post: (await getPost(deps, accountId, post.id)).post };
}

/** After a failed reschedule: places the targets it had already withdrawn again, at the post's unchanged time. */
async function restoreWithdrawn(deps: Deps, accountId: string, post: PostRow, tried: readonly TargetRow[]): Promise<void> {
  const triedIds = new Set(tried.map((t) => t.id));
  const withdrawn = ((await targetsOf(deps, [post.id])).get(post.id) ?? []).filter((t) => t.status === "withdrawn" && triedIds.has(t.id));
  if (withdrawn.length === 0) return;
  try {
    const chosen = connectionsOf(await listConnections(deps, accountId), withdrawn);
    const handOver = await replaceTargets(deps, post, chosen, post.scheduledTime, { ids: withdrawn.map((t) => t.id) });
    if (handOver.length > 0) await runDueOnce(deps, {}, handOver);
  } catch (error) {
    deps.log.error("could not place withdrawn targets again after a failed reschedule", { postId: post.id, error: (error as Error).message });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Confirmation of provider-held posts (job)

/**
 * For posts a provider holds (Mastodon scheduled statuses) whose time has passed: asks the provider whether they
 * went out, and records `published` with the public URL. Runs every minute.
 */
export async function confirmProviderHeldPosts(deps: Deps): Promise<{ confirmed: number }> {
  const now = deps.clock.now();
  const due = await deps.store.db
    .select({ target: scheduledPostTargets, post: scheduledPosts })
    .from(scheduledPostTargets)
    .innerJoin(scheduledPosts, eq(scheduledPosts.id, scheduledPostTargets.postId))
    .where(
      and(
        eq(scheduledPostTargets.status, "scheduled"),
        eq(scheduledPostTargets.heldByProvider, true),
        lt(scheduledPosts.scheduledTime, now - CONFIRM_DELAY_MS + 1),
      ),
    )
    .all();
  let confirmed = 0;
  for (const { target, post } of due) {
    if (!target.connectionId || !target.providerPostId) continue;
    const row = await deps.store.db.select().from(connections).where(eq(connections.id, target.connectionId)).get();
    if (!row) continue;
    const connector = connectorFor(row.platform);
    if (!connector.confirm) continue;
    try {
      const content = await loadDeliveryContent(deps, post, row.platform);
      const outcome = await connector.confirm(deps, openConnection(deps, row), target.providerPostId, content);
      if (outcome.state === "pending") continue;
      const recorded = await deps.store.write(async (tx) => {
        const values =
          outcome.state === "published"
            ? { status: "published" as const, providerPostId: outcome.providerPostId, publishedUrl: outcome.publishedUrl, publishedAt: deps.clock.now() }
            : { status: "failed" as const, errorMessage: "The post was removed at the provider before it went out." };
        const updated = await tx
          .update(scheduledPostTargets)
          .set({ ...values, updatedAt: deps.clock.now() })
          .where(
            and(
              eq(scheduledPostTargets.id, target.id),
              eq(scheduledPostTargets.status, "scheduled"),
              or(sql`${scheduledPostTargets.leaseExpiresAt} IS NULL`, lt(scheduledPostTargets.leaseExpiresAt, deps.clock.now())),
            ),
          )
          .returning({ id: scheduledPostTargets.id })
          .all();
        if (updated.length === 1) await refreshPostStatus(tx, post.id, deps.clock.now());
        return updated.length === 1;
      });
      if (recorded) {
        confirmed++;
        // No lateness: the provider published it at its own time; we only learn of it now.
        recordDeliveryOutcome(deps, target.platform, outcome.state === "published" ? DELIVERY_OUTCOME.published : DELIVERY_OUTCOME.failed);
      }
    } catch (error) {
      deps.log.warn("publication confirmation failed", { targetId: target.id, error: (error as Error).message });
    }
  }
  return { confirmed };
}
