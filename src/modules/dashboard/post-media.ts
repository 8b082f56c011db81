/**
 * What each scheduled post carries (its snapshot: the image for calendar thumbnails, the caption for its page). Read
 * only, filtered by the session's account.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { assets, scheduledPosts } from "../../db/tables";
import { MEDIA_PATH } from "../assets/service";

/** Post id → same-origin image path, for the posts that have an image. */
export async function postThumbnails(deps: Pick<Deps, "store">, accountId: string, postIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (postIds.length === 0) return out;
  const rows = await deps.store.db
    .select({ postId: scheduledPosts.id, assetId: assets.id, ext: assets.ext })
    .from(scheduledPosts)
    .innerJoin(assets, eq(assets.id, scheduledPosts.imageAssetId))
    .where(and(eq(scheduledPosts.accountId, accountId), inArray(scheduledPosts.id, [...postIds])))
    .all();
  for (const r of rows) out.set(r.postId, `${MEDIA_PATH}/${r.assetId}.${r.ext}`);
  return out;
}

/** The caption a post carries (its snapshot, line breaks and all), or null for a post not in the account. */
export async function postCaption(deps: Pick<Deps, "store">, accountId: string, postId: string): Promise<string | null> {
  const row = await deps.store.db
    .select({ caption: scheduledPosts.caption })
    .from(scheduledPosts)
    .where(and(eq(scheduledPosts.accountId, accountId), eq(scheduledPosts.id, postId)))
    .get();
  return row?.caption ?? null;
}
