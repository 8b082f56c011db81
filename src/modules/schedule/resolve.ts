/**
 * A person's answer for an `unconfirmed` target (decisions.md §12): the network could not tell whether it went out
 * (Telegram, a Discord webhook that answered nothing), so the dispatcher never resends it on its own. "It was posted"
 * makes the target published (with the URL when the person pastes one); "Send again" makes one new attempt, which
 * resumes after the parts already confirmed (never sending one twice). Both are conditional on the target still
 * being unconfirmed, so two answers at once take effect once. Shared by the API, MCP and the dashboard.
 */
import { and, eq } from "drizzle-orm";
import { scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { refreshPostStatus } from "../../publishing/post-status";
import { type PostApi, postToApi } from "../../publishing/post-view";

/** The two answers a person gives. */
export const RESOLVE_OUTCOMES = ["posted", "send_again"] as const;
export type ResolveOutcome = (typeof RESOLVE_OUTCOMES)[number];

export interface ResolveInput {
  outcome: ResolveOutcome;
  /** "posted": where it is, when the person pasted it (http or https). */
  publishedUrl?: string | null;
}

/** Longest published URL taken (as the target's publishedUrl). */
export const PUBLISHED_URL_MAX = 2048;

function checkedUrl(raw: string | null | undefined): string | null {
  const typed = raw?.trim() ?? "";
  if (typed === "") return null;
  let url: URL;
  try {
    url = new URL(typed);
  } catch {
    throw invalidField("published_url", "must be the post's address, such as https://t.me/yourchannel/123");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalidField("published_url", "must be an http or https address");
  if (typed.length > PUBLISHED_URL_MAX) throw invalidField("published_url", `must be at most ${PUBLISHED_URL_MAX} characters`);
  return url.toString();
}

/**
 * Answers for the unconfirmed target of post `postId` on connection `connectionId` (the target's `accountId` in the
 * API). 404 when the post or target is not the account's; 409 not_unconfirmed when the target is not unconfirmed
 * (already answered, or never so). Answers the post with its new status; after "send_again" the dispatcher picks the
 * target up at its next pass.
 */
export async function resolveUnconfirmedTarget(
  deps: Pick<Deps, "store" | "clock">,
  accountId: string,
  postId: string,
  connectionId: string,
  input: ResolveInput,
): Promise<{ post: PostApi }> {
  if (!(RESOLVE_OUTCOMES as readonly string[]).includes(input.outcome)) throw invalidField("outcome", `must be one of ${RESOLVE_OUTCOMES.join(", ")}`);
  const publishedUrl = input.outcome === "posted" ? checkedUrl(input.publishedUrl) : null;
  if (input.outcome === "send_again" && input.publishedUrl) throw invalidField("published_url", "goes only with outcome posted");
  if (!isUuid(postId) || !isUuid(connectionId)) throw notFound("scheduled post target");
  return deps.store.write(async (tx) => {
    const now = deps.clock.now();
    const post = await tx.select().from(scheduledPosts).where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.accountId, accountId))).get();
    if (!post) throw notFound("scheduled post");
    const target = await tx
      .select()
      .from(scheduledPostTargets)
      .where(and(eq(scheduledPostTargets.postId, postId), eq(scheduledPostTargets.connectionId, connectionId)))
      .get();
    if (!target) throw notFound("scheduled post target");
    const values =
      input.outcome === "posted"
        ? {
            status: "published" as const,
            publishedUrl,
            publishedAt: now,
            providerPostId: target.providerPostId ?? target.partsOut[0] ?? null,
            errorMessage: null,
          }
        : // One new attempt, due now; it resumes after the parts already out (parts_out).
          { status: "scheduled" as const, nextAttemptAt: now, errorMessage: null, sendStartedAt: null, leaseToken: null, leaseExpiresAt: null };
    const changed = await tx
      .update(scheduledPostTargets)
      .set({ ...values, updatedAt: now })
      .where(and(eq(scheduledPostTargets.id, target.id), eq(scheduledPostTargets.status, "unconfirmed")))
      .returning({ id: scheduledPostTargets.id })
      .all();
    if (changed.length === 0) {
      throw new AppError("not_unconfirmed", `The post to ${target.label} is ${target.status}, not waiting for an answer; nothing was changed.`, {
        status: target.status,
      });
    }
    await refreshPostStatus(tx, postId, now);
    const fresh = await tx.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get();
    const targets = await tx.select().from(scheduledPostTargets).where(eq(scheduledPostTargets.postId, postId)).orderBy(scheduledPostTargets.createdAt, scheduledPostTargets.id).all();
    return { post: postToApi(fresh ?? post, targets) };
  });
}
