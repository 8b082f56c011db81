/**
 * What uses a library image, for the library's "In use" badge: the seeds and creations that name it, and posts still
 * waiting to go out with it (the same rule as the assets module's delete check, `assetReferencedByPendingPost`).
 * Read only; every row is filtered by the session's account.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Deps } from "../../deps";
import { creations, scheduledPostTargets, scheduledPosts, seeds } from "../../db/tables";

export interface AssetUse {
  kind: "seed" | "creation" | "post";
  id: string;
  label: string;
  href: string;
}

const PENDING = ["scheduled", "publishing"] as const;

function short(text: string, max = 48): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : flat;
}

/** The uses of each of `assetIds` (absent from the map: unused). */
export async function assetUses(deps: Pick<Deps, "store">, accountId: string, assetIds: readonly string[]): Promise<Map<string, AssetUse[]>> {
  const out = new Map<string, AssetUse[]>();
  if (assetIds.length === 0) return out;
  const add = (assetId: string | null, use: AssetUse) => {
    if (!assetId) return;
    const list = out.get(assetId) ?? [];
    if (!list.some((u) => u.kind === use.kind && u.id === use.id)) list.push(use);
    out.set(assetId, list);
  };
  const ids = [...assetIds];
  for (const row of await deps.store.db
    .select({ id: seeds.id, title: seeds.title, assetId: seeds.imageAssetId })
    .from(seeds)
    .where(and(eq(seeds.accountId, accountId), inArray(seeds.imageAssetId, ids)))
    .all()) {
    add(row.assetId, { kind: "seed", id: row.id, label: `Seed “${short(row.title)}”`, href: `/dashboard/seeds/${row.id}` });
  }
  for (const row of await deps.store.db
    .select({ id: creations.id, caption: creations.caption, assetId: creations.imageAssetId })
    .from(creations)
    .where(and(eq(creations.accountId, accountId), inArray(creations.imageAssetId, ids)))
    .all()) {
    add(row.assetId, { kind: "creation", id: row.id, label: `Creation “${short(row.caption)}”`, href: `/dashboard/creations/${row.id}` });
  }
  for (const row of await deps.store.db
    .select({ id: scheduledPosts.id, assetId: scheduledPosts.imageAssetId, at: scheduledPosts.scheduledTime })
    .from(scheduledPosts)
    .innerJoin(scheduledPostTargets, eq(scheduledPostTargets.postId, scheduledPosts.id))
    .where(and(eq(scheduledPosts.accountId, accountId), inArray(scheduledPosts.imageAssetId, ids), inArray(scheduledPostTargets.status, [...PENDING])))
    .all()) {
    add(row.assetId, { kind: "post", id: row.id, label: "A post waiting to go out", href: `/dashboard/calendar/posts/${row.id}` });
  }
  return out;
}
