/**
 * Scheduling (decisions.md §7): the targets list, scheduling a creation to connected accounts, cancel, and the
 * calendar reads. The post stores a snapshot of the creation (caption, alt text, image asset id); the dispatcher
 * (src/publishing/dispatcher.ts) delivers what the service holds, Mastodon holds its own scheduled statuses.
 */
import { and, desc, eq, gte, inArray, lt, or, sql } from "drizzle-orm";
import { type PostStatus, scheduledPosts, scheduledPostTargets } from "../../db/schema/scheduled-posts";
import { connections } from "../../db/schema/connections";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import type { CaptionLimit } from "../../publishing/connector";
import { DeliveryError } from "../../publishing/connector";
import { runDueOnce } from "../../publishing/dispatcher";
import { loadDeliveryContent, loadSnapshotImage } from "../../publishing/content";
import { DELIVERY_OUTCOME, recordDeliveryOutcome } from "../../publishing/delivery-metrics";
import { refreshPostStatus } from "../../publishing/post-status";
import { withdrawPendingTargets } from "../../publishing/withdraw";
import { connectorFor } from "../../publishing/registry";
import { decodeCursor, encodeCursor } from "../assets/cursor";
import { registerAssetReferenceCheck } from "../assets/references";
import { type ConnectionRow, connectionView, listConnections, openConnection } from "../connections/service";
import { findCreationRow, graphemeCount } from "../creations/service";
import { LIST_LIMIT_DEFAULT } from "./model";

/** Minimum lead time of POST /schedule. */
export const MIN_LEAD_MS = 5 * 60 * 1000;
/** The dashboard page where connections are managed. */
export const MANAGE_PATH = "/dashboard/connections";
/** How long after its time a provider-held post is first checked for publication. */
export const CONFIRM_DELAY_MS = 60_000;
const ISO_UTC_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z$/;
const URL_RE = /https?:\/\/[^\s<>"]+/g;
const PENDING_TARGET = ["scheduled", "publishing"] as const;

type PostRow = typeof scheduledPosts.$inferSelect;
type TargetRow = typeof scheduledPostTargets.$inferSelect;

export interface PostTargetApi {
  accountId: string;
  platform: string;
  label: string;
  status: "scheduled" | "publishing" | "published" | "failed";
  providerPostId: string | null;
  publishedUrl: string | null;
  errorMessage: string | null;
  withdrawn: boolean;
}

export interface PostApi {
  id: string;
  creationId: string;
  scheduledTime: string;
  status: PostStatus;
  errorMessage?: string;
  targets: PostTargetApi[];
  createdAt: string;
}

// An asset blocks deletion only while a post that still has something to deliver uses it (the snapshot column is
// scheduled_posts.image_asset_id).
registerAssetReferenceCheck("scheduled_posts", (deps, assetId) => (assetReferencedByPendingPost(deps, assetId) ? 1 : 0));

/** True while a post with a pending (scheduled or publishing) target uses `assetId` as its image. */
export function assetReferencedByPendingPost(deps: Pick<Deps, "db">, assetId: string): boolean {
  const row = deps.db
    .select({ id: scheduledPosts.id })
    .from(scheduledPosts)
    .innerJoin(scheduledPostTargets, eq(scheduledPostTargets.postId, scheduledPosts.id))
    .where(and(eq(scheduledPosts.imageAssetId, assetId), inArray(scheduledPostTargets.status, PENDING_TARGET)))
    .limit(1)
    .get();
  return row !== undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Views

function targetToApi(row: TargetRow): PostTargetApi {
  const withdrawn = row.status === "withdrawn";
  return {
    accountId: row.connectionId ?? row.id,
    platform: row.platform,
    label: row.label,
    // A withdrawn target only exists while a cancel could not finish; it shows its last public state.
    status: row.status === "withdrawn" ? "scheduled" : row.status,
    providerPostId: row.providerPostId,
    publishedUrl: row.publishedUrl,
    errorMessage: row.errorMessage,
    withdrawn,
  };
}

function postToApi(post: PostRow, targets: TargetRow[]): PostApi {
  const api: PostApi = {
    id: post.id,
    creationId: post.creationId,
    scheduledTime: isoAt(post.scheduledTime),
    status: post.status,
    targets: targets.map(targetToApi),
    createdAt: isoAt(post.createdAt),
  };
  if ((post.status === "failed" || post.status === "partially_failed") && post.errorMessage) api.errorMessage = post.errorMessage;
  return api;
}

function targetsOf(deps: Pick<Deps, "db">, postIds: string[]): Map<string, TargetRow[]> {
  const byPost = new Map<string, TargetRow[]>();
  if (postIds.length === 0) return byPost;
  const rows = deps.db
    .select()
    .from(scheduledPostTargets)
    .where(inArray(scheduledPostTargets.postId, postIds))
    .orderBy(scheduledPostTargets.createdAt, scheduledPostTargets.id)
    .all();
  for (const row of rows) byPost.set(row.postId, [...(byPost.get(row.postId) ?? []), row]);
  return byPost;
}

function findPost(deps: Pick<Deps, "db">, accountId: string, postId: string): PostRow | null {
  if (!isUuid(postId)) return null;
  return deps.db.select().from(scheduledPosts).where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.accountId, accountId))).get() ?? null;
}

// ---------------------------------------------------------------------------------------------------------------
// Targets

/** GET /schedule/targets: every connection, ready or not, and where to manage them. */
export function listTargets(deps: Deps, accountId: string): { targets: ReturnType<typeof connectionView>[]; manageUrl: string } {
  return { targets: listConnections(deps, accountId).map(connectionView), manageUrl: `${deps.config.baseUrl}${MANAGE_PATH}` };
}

/** Resolves the request's target names (platform or accountId) to connections. Throws the 400s of §7. */
function resolveTargets(all: ConnectionRow[], names: readonly string[]): ConnectionRow[] {
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

/** Caption length under a platform's counting rule. */
function captionLength(caption: string, limit: CaptionLimit): number {
  const counted = limit.urlLength === undefined ? caption : caption.replace(URL_RE, "x".repeat(limit.urlLength));
  return graphemeCount(counted);
}

// ---------------------------------------------------------------------------------------------------------------
// Schedule

export interface ScheduleInput {
  creationId: string;
  scheduledTime: string;
  targets: readonly string[];
}

/** Parses the ISO 8601 UTC scheduled_time; 400 invalid_request when it is not one. */
function parseScheduledTime(value: string): number {
  const ms = Date.parse(value);
  if (!ISO_UTC_RE.test(value) || Number.isNaN(ms)) throw invalidField("scheduled_time", "must be an ISO 8601 UTC timestamp such as 2026-11-22T10:00:00Z");
  return ms;
}

/**
 * POST /schedule. Checks in the order of decisions.md §1, stores the post with its content snapshot, then hands
 * provider-held targets (Mastodon) over at once: a provider's refusal answers 200 with that target failed.
 */
export async function schedulePost(deps: Deps, accountId: string, input: ScheduleInput): Promise<{ post: PostApi }> {
  const now = deps.clock.now();
  const scheduledTime = parseScheduledTime(input.scheduledTime);
  if (scheduledTime < now + MIN_LEAD_MS) {
    throw new AppError("scheduled_time_too_soon", "scheduled_time must be at least 5 minutes ahead.", { earliestAllowed: isoAt(now + MIN_LEAD_MS) });
  }
  const chosen = resolveTargets(listConnections(deps, accountId), input.targets);
  const creation = findCreationRow(deps, accountId, input.creationId);
  if (!creation) throw notFound("creation");

  const notReady = chosen.find((c) => !c.readyToPost);
  if (notReady) {
    throw new AppError("target_not_ready", `${notReady.label} cannot post right now: ${notReady.blockedReason ?? "it needs attention"}`, {
      accountId: notReady.id,
      platform: notReady.platform,
      blockedReason: notReady.blockedReason ?? "The connection needs attention.",
    });
  }

  const caption = creation.caption.trim();
  const problems: Array<{ accountId?: string; platform?: string; field: string; problem: string }> = [];
  if (caption === "") problems.push({ field: "caption", problem: "the creation has no caption" });
  for (const connection of chosen) {
    const limit = connectorFor(connection.platform).captionLimit(openConnection(deps, connection));
    if (limit === null || caption === "") continue;
    const length = captionLength(creation.caption, limit);
    if (length > limit.maxGraphemes) {
      problems.push({
        accountId: connection.id,
        platform: connection.platform,
        field: "caption",
        problem: `the caption is ${length} characters; ${limit.platformName} (${connection.label}) allows ${limit.maxGraphemes}`,
      });
    }
  }
  if (creation.imageAssetId) {
    try {
      await loadSnapshotImage(deps, creation.imageAssetId);
    } catch (error) {
      problems.push({ field: "image", problem: error instanceof DeliveryError ? error.message : "the image cannot be read" });
    }
  }
  if (problems.length > 0) {
    throw new AppError("not_schedulable", `The creation cannot be scheduled: ${problems.map((p) => p.problem).join("; ")}.`, { problems });
  }

  const postId = newId();
  const handOver: string[] = [];
  deps.db.transaction(
    (tx) => {
      tx.insert(scheduledPosts)
        .values({
          id: postId,
          accountId,
          creationId: creation.id,
          scheduledTime,
          status: "scheduled",
          caption: creation.caption,
          altText: creation.altText,
          imageAssetId: creation.imageAssetId,
          createdAt: now,
          updatedAt: now,
        })
        .run();
      for (const connection of chosen) {
        const id = newId();
        const native = connectorFor(connection.platform).holdsNatively(scheduledTime, now);
        if (native) handOver.push(id);
        tx.insert(scheduledPostTargets)
          .values({
            id,
            postId,
            accountId,
            connectionId: connection.id,
            platform: connection.platform,
            label: connection.label,
            status: "scheduled",
            nextAttemptAt: native ? now : scheduledTime,
            createdAt: now,
            updatedAt: now,
          })
          .run();
      }
    },
    { behavior: "immediate" },
  );
  if (handOver.length > 0) await runDueOnce(deps, {}, handOver);
  return { post: getPost(deps, accountId, postId).post };
}

// ---------------------------------------------------------------------------------------------------------------
// Reads

/** GET /schedule/posts/{id}. */
export function getPost(deps: Pick<Deps, "db">, accountId: string, postId: string): { post: PostApi } {
  const post = findPost(deps, accountId, postId);
  if (!post) throw notFound("scheduled post");
  return { post: postToApi(post, targetsOf(deps, [post.id]).get(post.id) ?? []) };
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
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidField(field, "must be an ISO 8601 timestamp");
  return ms;
}

/** GET /schedule/posts: newest first, `from`/`to` bound scheduledTime, optional status filter. */
export function listPosts(deps: Pick<Deps, "db">, accountId: string, query: ListPostsQuery): { posts: PostApi[]; nextCursor: string | null } {
  const from = parseBound("from", query.from);
  const to = parseBound("to", query.to);
  const limit = query.limit ?? LIST_LIMIT_DEFAULT;
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const rows = deps.db
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
  const targets = targetsOf(deps, page.map((p) => p.id));
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
 * (retryable), the row kept, targets already withdrawn remembered. A published target: 409 already_published.
 */
export async function cancelPost(deps: Deps, accountId: string, postId: string): Promise<{ id: string; cancelled: true; providerPostWithdrawn: boolean }> {
  const post = findPost(deps, accountId, postId);
  if (!post) throw notFound("scheduled post");
  const targets = targetsOf(deps, [post.id]).get(post.id) ?? [];
  if (targets.some((t) => t.status === "published")) {
    throw new AppError("already_published", "This post was already published; it can no longer be cancelled.");
  }
  const pending = targets.filter((t) => t.status === "scheduled" || t.status === "publishing");
  await withdrawPendingTargets(deps, pending, {
    busy: () => distributionFailed("A delivery of this post is in progress right now; try the cancel again in a moment."),
    failed: (target, why) => distributionFailed(`Could not withdraw the post from ${target.label}: ${why} The post is kept; try again.`),
    onPublished: (target) => {
      throw new AppError("already_published", `This post was already published to ${target.label}; it can no longer be cancelled.`);
    },
  });
  const withdrawnFromProvider = deps.db
    .select({ n: sql<number>`count(*)` })
    .from(scheduledPostTargets)
    .where(and(eq(scheduledPostTargets.postId, post.id), eq(scheduledPostTargets.status, "withdrawn"), eq(scheduledPostTargets.heldByProvider, true)))
    .get();
  deps.db.transaction(
    (tx) => {
      const stillPending = tx
        .select({ id: scheduledPostTargets.id })
        .from(scheduledPostTargets)
        .where(and(eq(scheduledPostTargets.postId, post.id), inArray(scheduledPostTargets.status, ["scheduled", "publishing", "published"])))
        .all();
      if (stillPending.length > 0) throw distributionFailed("The post changed while it was being cancelled; try again.");
      tx.delete(scheduledPosts).where(eq(scheduledPosts.id, post.id)).run();
    },
    { behavior: "immediate" },
  );
  return { id: post.id, cancelled: true, providerPostWithdrawn: (withdrawnFromProvider?.n ?? 0) > 0 };
}

// ---------------------------------------------------------------------------------------------------------------
// Confirmation of provider-held posts (job)

/**
 * For posts a provider holds (Mastodon scheduled statuses) whose time has passed: asks the provider whether they
 * went out, and records `published` with the public URL. Runs every minute.
 */
export async function confirmProviderHeldPosts(deps: Deps): Promise<{ confirmed: number }> {
  const now = deps.clock.now();
  const due = deps.db
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
    const row = deps.db.select().from(connections).where(eq(connections.id, target.connectionId)).get();
    if (!row) continue;
    const connector = connectorFor(row.platform);
    if (!connector.confirm) continue;
    try {
      const content = await loadDeliveryContent(deps, post);
      const outcome = await connector.confirm(deps, openConnection(deps, row), target.providerPostId, content);
      if (outcome.state === "pending") continue;
      const recorded = deps.db.transaction(
        (tx) => {
          const values =
            outcome.state === "published"
              ? { status: "published" as const, providerPostId: outcome.providerPostId, publishedUrl: outcome.publishedUrl, publishedAt: deps.clock.now() }
              : { status: "failed" as const, errorMessage: "The post was removed at the provider before it went out." };
          const updated = tx
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
          if (updated.length === 1) refreshPostStatus(tx, post.id, deps.clock.now());
          return updated.length === 1;
        },
        { behavior: "immediate" },
      );
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
