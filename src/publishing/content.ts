/**
 * Loads what a target sends: the post's snapshot (caption, images, thread, first comment) with the target's network
 * version applied (decisions.md §13), and every image's bytes from the library.
 */
import { inArray } from "drizzle-orm";
import { assets } from "../db/tables";
import type { StoredImage, StoredPart, StoredVariants } from "../db/schema/post-content";
import type { scheduledPosts } from "../db/schema/scheduled-posts";
import type { Deps } from "../deps";
import { assetUrl } from "../store/media-url";
import { type DeliveryContent, DeliveryError, type DeliveryImage, type HeldContent } from "./connector";

type PostRow = typeof scheduledPosts.$inferSelect;

/** A post's content as stored (a creation's, or a post's snapshot). */
export interface StoredContent {
  caption: string;
  images: StoredImage[];
  thread: StoredPart[];
  firstComment: string | null;
  variants: StoredVariants;
}

/** What one network's targets send: `content` with that platform's version applied (a field it sets wins). */
export function contentForPlatform(content: StoredContent, platform: string): Omit<StoredContent, "variants"> {
  const version = content.variants[platform] ?? {};
  return { caption: version.caption ?? content.caption, images: version.images ?? content.images, ...heldContentFor(content, platform) };
}

/** The part of a platform's content holdsNatively looks at (the thread and first comment, its version applied). */
export function heldContentFor(
  content: Pick<StoredContent, "thread" | "firstComment" | "variants">,
  platform: string,
): HeldContent & Pick<StoredContent, "thread" | "firstComment"> {
  const version = content.variants[platform] ?? {};
  const firstComment = version.firstComment !== undefined ? version.firstComment : content.firstComment;
  return { thread: version.thread ?? content.thread, firstComment: firstComment === "" ? null : firstComment };
}

/** Every asset id `content` uses (the post's, its thread's, and every version's images). */
export function assetIdsOf(content: Pick<StoredContent, "images" | "thread" | "variants">): string[] {
  const ids = new Set<string>();
  const addAll = (images: readonly StoredImage[] | undefined) => images?.forEach((i) => ids.add(i.assetId));
  const addParts = (parts: readonly StoredPart[] | undefined) => parts?.forEach((p) => addAll(p.images));
  addAll(content.images);
  addParts(content.thread);
  for (const version of Object.values(content.variants)) {
    addAll(version.images);
    addParts(version.thread);
  }
  return [...ids];
}

/** The images' bytes, types and public URLs. Throws a permanent DeliveryError when one is gone. */
export async function loadImages(deps: Pick<Deps, "store" | "storage" | "config">, images: readonly StoredImage[]): Promise<DeliveryImage[]> {
  if (images.length === 0) return [];
  const rows = await deps.store.db.select().from(assets).where(inArray(assets.id, images.map((i) => i.assetId))).all();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return Promise.all(
    images.map(async (image) => {
      const asset = byId.get(image.assetId);
      if (!asset) throw new DeliveryError("permanent", "One of the post's images is no longer in the library.");
      if (!(await deps.storage.exists(asset.storageKey))) throw new DeliveryError("permanent", "One of the post's image files is missing from storage.");
      const bytes = await deps.storage.read(asset.storageKey);
      return { assetId: asset.id, bytes, mimeType: asset.mimeType, url: assetUrl(deps, asset), altText: image.altText };
    }),
  );
}

/** What the target on `platform` of `post` sends, with image bytes read from storage. Throws a permanent DeliveryError when an image is gone. */
export async function loadDeliveryContent(deps: Pick<Deps, "store" | "storage" | "config">, post: PostRow, platform: string): Promise<DeliveryContent> {
  const chosen = contentForPlatform(post, platform);
  return {
    postId: post.id,
    scheduledTime: post.scheduledTime,
    caption: chosen.caption,
    images: await loadImages(deps, chosen.images),
    thread: await Promise.all(chosen.thread.map(async (part) => ({ caption: part.caption, images: await loadImages(deps, part.images) }))),
    firstComment: chosen.firstComment,
  };
}
