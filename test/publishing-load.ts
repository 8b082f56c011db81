/**
 * Inserts many service-held posts directly (bypassing the API's 5-minute lead time), due at chosen times: for the
 * crash-safety tests and the dispatch benchmark. The rows are exactly what POST /schedule would store for a webhook.
 */
import type { StoredImage, StoredPart } from "../src/db/schema/post-content";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import type { Deps } from "../src/deps";
import { newId } from "../src/lib/ids";

/** What each inserted post holds beyond its caption (decisions.md §13): images, thread, first comment. */
export interface DuePostContent {
  /** Default `Post <i>`. */
  caption?: string;
  images?: StoredImage[];
  thread?: StoredPart[];
  firstComment?: string | null;
}

/**
 * Inserts `count` posts, one target each (a webhook unless `platform` says otherwise), due evenly over `spreadMs`
 * from `firstDueAt`, with `content` (the contract columns; image_asset_id/alt_text mirror images[0]). Answers target ids.
 */
export async function insertDuePosts(
  deps: Deps,
  opts: {
    accountId: string;
    connectionId: string;
    creationId: string;
    count: number;
    firstDueAt: number;
    spreadMs: number;
    label?: string;
    platform?: string;
    /** The same for every post, or each post's own (by its index). */
    content?: DuePostContent | ((index: number) => DuePostContent);
  },
): Promise<string[]> {
  const ids: string[] = [];
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    for (let i = 0; i < opts.count; i++) {
      const postId = newId();
      const targetId = newId();
      const due = opts.firstDueAt + Math.floor((i * opts.spreadMs) / Math.max(1, opts.count));
      const content = typeof opts.content === "function" ? opts.content(i) : opts.content;
      const images = content?.images ?? [];
      await tx
        .insert(scheduledPosts)
        .values({
          id: postId,
          accountId: opts.accountId,
          creationId: opts.creationId,
          scheduledTime: due,
          status: "scheduled",
          caption: content?.caption ?? `Post ${i}`,
          altText: images[0]?.altText ?? null,
          imageAssetId: images[0]?.assetId ?? null,
          images,
          thread: content?.thread ?? [],
          firstComment: content?.firstComment ?? null,
          createdAt: now,
          updatedAt: now,
        })
        .run();
      await tx
        .insert(scheduledPostTargets)
        .values({
          id: targetId,
          postId,
          accountId: opts.accountId,
          connectionId: opts.connectionId,
          platform: opts.platform ?? "webhook",
          label: opts.label ?? "receiver",
          status: "scheduled",
          nextAttemptAt: due,
          createdAt: now,
          updatedAt: now,
        })
        .run();
      ids.push(targetId);
    }
  });
  return ids;
}
