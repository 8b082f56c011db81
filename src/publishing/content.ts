/** Loads the content snapshot a post delivers: its caption and alt text, and the image bytes from the library. */
import { eq } from "drizzle-orm";
import { assets } from "../db/schema/assets";
import type { scheduledPosts } from "../db/schema/scheduled-posts";
import type { Deps } from "../deps";
import { type DeliveryContent, DeliveryError } from "./connector";

type PostRow = typeof scheduledPosts.$inferSelect;

/** The public library URL of an asset (decisions.md §4). */
export function assetUrl(deps: Pick<Deps, "config">, assetId: string, ext: string): string {
  return `${deps.config.baseUrl}/media/${assetId}.${ext}`;
}

/** The snapshot of `post`, with the image bytes read from storage. Throws a permanent DeliveryError when gone. */
export async function loadDeliveryContent(deps: Pick<Deps, "db" | "storage" | "config">, post: PostRow): Promise<DeliveryContent> {
  let image: DeliveryContent["image"] = null;
  if (post.imageAssetId) {
    const asset = deps.db.select().from(assets).where(eq(assets.id, post.imageAssetId)).get();
    if (!asset) throw new DeliveryError("permanent", "The post's image is no longer in the library.");
    const blob = deps.storage.blob(asset.storageKey);
    if (!(await deps.storage.exists(asset.storageKey))) throw new DeliveryError("permanent", "The post's image file is missing from storage.");
    image = { bytes: new Uint8Array(await blob.arrayBuffer()), mimeType: asset.mimeType, url: assetUrl(deps, asset.id, asset.ext), assetId: asset.id };
  }
  return { postId: post.id, caption: post.caption, altText: post.altText, image, scheduledTime: post.scheduledTime };
}
