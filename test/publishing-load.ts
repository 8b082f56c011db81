/**
 * Inserts many service-held posts directly (bypassing the API's 5-minute lead time), due at chosen times: for the
 * crash-safety test and the dispatch benchmark. The rows are exactly what POST /schedule would store for a webhook.
 */
import type { ConnectionPlatform } from "../src/db/schema/connections";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import type { Deps } from "../src/deps";
import { newId } from "../src/lib/ids";

/** Inserts `count` posts, one target each (a webhook unless `platform` says otherwise), due evenly over `spreadMs` from `firstDueAt`. Answers target ids. */
export async function insertDuePosts(
  deps: Deps,
  opts: { accountId: string; connectionId: string; creationId: string; count: number; firstDueAt: number; spreadMs: number; label?: string; platform?: ConnectionPlatform },
): Promise<string[]> {
  const ids: string[] = [];
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    for (let i = 0; i < opts.count; i++) {
      const postId = newId();
      const targetId = newId();
      const due = opts.firstDueAt + Math.floor((i * opts.spreadMs) / Math.max(1, opts.count));
      await tx
        .insert(scheduledPosts)
        .values({ id: postId, accountId: opts.accountId, creationId: opts.creationId, scheduledTime: due, status: "scheduled", caption: `Post ${i}`, altText: null, imageAssetId: null, createdAt: now, updatedAt: now })
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
