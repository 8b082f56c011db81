/** Loads the content snapshot a post delivers: its caption and alt text, and the image bytes from the library. */
import { eq } from "drizzle-orm";
import { assets } from "../db/tables";
import type { scheduledPosts } from "../db/schema/scheduled-posts";
import type { Deps } from "../deps";
import { assetUrl } from "../store/media-url";
import { type DeliveryContent, DeliveryError } from "./connector";

type PostRow = typeof scheduledPosts.$inferSelect;

/** The snapshot's image: bytes from storage, type and public library URL. Throws a permanent DeliveryError when gone. */
export async function loadSnapshotImage(deps: Pick<Deps, "store" | "storage" | "config">, assetId: string): Promise<NonNullable<DeliveryContent["image"]>> {
  const asset = await deps.store.db.select().from(assets).where(eq(assets.id, assetId)).get();
  if (!asset) throw new DeliveryError("permanent", "The post's image is no longer in the library.");
  if (!(await deps.storage.exists(asset.storageKey))) throw new DeliveryError("permanent", "The post's image file is missing from storage.");
  const bytes = await deps.storage.read(asset.storageKey);
  return { bytes, mimeType: asset.mimeType, url: assetUrl(deps, asset), assetId: asset.id };
}

/** The snapshot of `post`, with the image bytes read from storage. Throws a permanent DeliveryError when gone. */
export async function loadDeliveryContent(deps: Pick<Deps, "store" | "storage" | "config">, post: PostRow): Promise<DeliveryContent> {
  const image = post.imageAssetId ? await loadSnapshotImage(deps, post.imageAssetId) : null;
  return { postId: post.id, caption: post.caption, altText: post.altText, image, scheduledTime: post.scheduledTime };
}
