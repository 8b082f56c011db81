/**
 * Posts written and edited by hand (decisions.md §10, §13): POST /creations writes one (free), PATCH changes any of
 * its fields (free), DELETE removes it unless a pending post still uses it (409 creation_in_use). A scheduled post
 * keeps its own snapshot either way: nothing here touches scheduled_posts.
 *
 * API for other modules and the dashboard (camelCase inputs: content-input.ts):
 *  - `createCreationByHand(deps, accountId, input: CreationInput)` → Promise<Creation>
 *  - `updateCreation(deps, accountId, id, patch: CreationPatch)` → Promise<Creation>
 *  - `deleteCreation(deps, accountId, id)` → Promise<{id, deleted: true}>
 */
import { and, eq, inArray } from "drizzle-orm";
import type { CreationRow } from "../../db/schema";
import type { StoredImage, StoredPart, StoredVariants } from "../../db/schema/post-content";
import { creations, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { StoreDb } from "../../db/store";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { assetIdsOf } from "../../publishing/content";
import { DEFAULT_ASPECT_RATIO, DEFAULT_MEDIA_STYLE } from "../../generation/generator";
import { getOwnedSeed } from "../seeds/service";
import {
  type CreationInput,
  type CreationPatch,
  assertOwnedAssets,
  cleanAltText,
  cleanFirstComment,
  cleanHandCaption,
  cleanImages,
  cleanThread,
  cleanVariants,
  lockAssets,
} from "./content-input";
import { CREATION_TYPE, type Creation } from "./model";
import { creationToApi, findCreationRow, serialized, viewOf } from "./service";
import { HAND_SOURCE, keepVersion } from "./versions";

/** The stored content fields of a creation. */
export type ContentFields = Pick<CreationRow, "caption" | "images" | "thread" | "firstComment" | "variants">;

/** The columns that mirror images[0] (db/schema/post-content.ts), for `images`. */
function firstImageColumns(images: readonly StoredImage[]): Pick<CreationRow, "imageAssetId" | "altText"> {
  const first = images[0];
  return { imageAssetId: first?.assetId ?? null, altText: first ? (first.altText ?? "") : null };
}

/**
 * The row of a creation written by hand from cleaned `content` (its assets checked by the caller), not yet stored.
 * POST /creations and the CSV import (modules/schedule/import.ts) write it.
 */
export function handCreationRow(accountId: string, content: ContentFields, seedId: string | null, now: number): CreationRow {
  const first = firstImageColumns(content.images);
  return {
    id: newId(),
    accountId,
    type: CREATION_TYPE,
    seedId,
    ...content,
    ...first,
    captionSource: HAND_SOURCE,
    altTextSource: first.imageAssetId ? HAND_SOURCE : null,
    aspectRatio: DEFAULT_ASPECT_RATIO,
    mediaStyle: DEFAULT_MEDIA_STYLE,
    variant: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * POST /creations: a post written by hand, free. Checks in the order of decisions.md §1: the texts (400), then the
 * seed and every image (404). The images are locked while the row is written, so an image deleted at that moment
 * answers 404 and never leaves the creation pointing at nothing.
 */
export async function createCreationByHand(deps: Deps, accountId: string, input: CreationInput): Promise<Creation> {
  const content: ContentFields = {
    caption: cleanHandCaption(input.caption),
    images: cleanImages(input.images ?? [], "images"),
    thread: cleanThread(input.thread ?? [], "thread"),
    firstComment: cleanFirstComment(input.firstComment),
    variants: cleanVariants(input.variants ?? {}),
  };
  const seedId = input.seedId === undefined ? null : (await getOwnedSeed(deps, accountId, input.seedId)).id;
  const used = assetIdsOf(content);
  await assertOwnedAssets(deps, accountId, used);
  const row = handCreationRow(accountId, content, seedId, deps.clock.now());
  await deps.store.write(async (tx) => {
    if (!(await lockAssets(deps, accountId, used))) throw notFound("asset");
    await tx.insert(creations).values(row).run();
  });
  return creationToApi(deps, await viewOf(deps, row));
}

/** The fields a patch sets, cleaned (400s); fields it leaves out are absent. */
function cleanPatch(patch: CreationPatch): Partial<ContentFields> & { altText?: string } {
  if (patch.altText !== undefined && patch.images !== undefined) {
    throw invalidField("altText", "cannot be sent together with images: give each image its alt_text there");
  }
  return {
    ...(patch.caption !== undefined ? { caption: cleanHandCaption(patch.caption) } : {}),
    ...(patch.altText !== undefined ? { altText: cleanAltText(patch.altText, "altText") } : {}),
    ...(patch.images !== undefined ? { images: cleanImages(patch.images ?? [], "images") } : {}),
    ...(patch.thread !== undefined ? { thread: cleanThread(patch.thread ?? [], "thread") } : {}),
    ...(patch.firstComment !== undefined ? { firstComment: cleanFirstComment(patch.firstComment) } : {}),
    ...(patch.variants !== undefined ? { variants: cleanVariants(patch.variants ?? {}) } : {}),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * PATCH /creations/{id}: sets any of the caption, the first image's alt text, the images (the whole list), the thread,
 * the first comment and the versions per network; null (or [] / {} / "") removes a field. Free. Texts a person wrote
 * are marked written by hand, and the content replaced is kept as a version (versions.ts). The variant regenerate
 * counts from and every scheduled post's snapshot stay as they are. Runs in the creation's regenerate queue, so an
 * edit never interleaves with a regenerate of the same creation. Order of checks: 400 (the texts), 404 (the creation,
 * then every new image), then 400 for alt text on a creation without an image.
 */
export async function updateCreation(deps: Deps, accountId: string, id: string, patch: CreationPatch): Promise<Creation> {
  const fields = Object.keys(patch).filter((k) => patch[k as keyof CreationPatch] !== undefined);
  if (fields.length === 0) {
    throw new AppError("invalid_request", "Send at least one of caption, alt_text, images, thread, first_comment, variants.", {
      details: [{ field: "body", problem: "must contain caption, alt_text, images, thread, first_comment or variants" }],
    });
  }
  const cleaned = cleanPatch(patch);
  if (!(await findCreationRow(deps, accountId, id))) throw notFound("creation");
  const newAssets = assetIdsOf({ images: cleaned.images ?? [], thread: cleaned.thread ?? [], variants: cleaned.variants ?? {} });
  await assertOwnedAssets(deps, accountId, newAssets);
  return serialized(id, async () => {
    const current = await findCreationRow(deps, accountId, id);
    if (!current) throw notFound("creation");
    let images: StoredImage[] = cleaned.images ?? current.images;
    if (cleaned.altText !== undefined) {
      const first = images[0];
      if (!first) throw invalidField("altText", "cannot be set: the creation has no image");
      images = [{ ...first, altText: cleaned.altText === "" ? null : cleaned.altText }, ...images.slice(1)];
    }
    const next: ContentFields = {
      caption: cleaned.caption ?? current.caption,
      images,
      thread: (cleaned.thread ?? current.thread) as StoredPart[],
      firstComment: cleaned.firstComment !== undefined ? cleaned.firstComment : current.firstComment,
      variants: (cleaned.variants ?? current.variants) as StoredVariants,
    };
    const first = firstImageColumns(next.images);
    const captionChanges = next.caption !== current.caption;
    const firstChanges = first.imageAssetId !== current.imageAssetId || (first.imageAssetId !== null && first.altText !== (current.altText ?? ""));
    const otherChanges = !same(next.images, current.images) || !same(next.thread, current.thread) || next.firstComment !== current.firstComment || !same(next.variants, current.variants);
    // Saving the same content again changes nothing: no version, and who wrote it stays as it was.
    if (!captionChanges && !firstChanges && !otherChanges) return creationToApi(deps, await viewOf(deps, current));
    const changes = {
      ...next,
      ...first,
      ...(captionChanges ? { captionSource: HAND_SOURCE } : {}),
      ...(firstChanges ? { altTextSource: first.imageAssetId ? HAND_SOURCE : null } : {}),
      updatedAt: deps.clock.now(),
    };
    const row = await deps.store.write(async (tx) => {
      if (!(await lockAssets(deps, accountId, newAssets))) throw notFound("asset");
      await keepVersion(deps, current);
      return tx
        .update(creations)
        .set(changes)
        .where(and(eq(creations.id, id), eq(creations.accountId, accountId)))
        .returning()
        .get();
    });
    if (!row) throw notFound("creation"); // deleted meanwhile
    return creationToApi(deps, await viewOf(deps, row));
  });
}

/** True while a post with a pending (scheduled or publishing) target was scheduled from `creationId`. */
async function usedByPendingPost(tx: StoreDb, creationId: string): Promise<boolean> {
  const row = await tx
    .select({ id: scheduledPosts.id })
    .from(scheduledPosts)
    .innerJoin(scheduledPostTargets, eq(scheduledPostTargets.postId, scheduledPosts.id))
    .where(and(eq(scheduledPosts.creationId, creationId), inArray(scheduledPostTargets.status, ["scheduled", "publishing"])))
    .limit(1)
    .get();
  return row !== undefined;
}

/**
 * DELETE /creations/{id}: removes the creation (its image stays in the library). 404 for a missing or another
 * account's id; 409 creation_in_use while a pending post was scheduled from it. Checked and deleted in one write
 * transaction, so a post scheduled at the same moment either sees the creation or the 404.
 */
export async function deleteCreation(deps: Deps, accountId: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(id)) throw notFound("creation");
  await deps.store.write(async (tx) => {
    const exists = await tx
      .select({ id: creations.id })
      .from(creations)
      .where(and(eq(creations.id, id), eq(creations.accountId, accountId)))
      .get();
    if (!exists) throw notFound("creation");
    if (await usedByPendingPost(tx, id)) {
      throw new AppError(
        "creation_in_use",
        "A scheduled post that has not gone out yet was made from this creation; cancel it (DELETE /api/v1/schedule/{id}) or wait until it is published.",
      );
    }
    await tx.delete(creations).where(and(eq(creations.id, id), eq(creations.accountId, accountId))).run();
  });
  return { id, deleted: true };
}
