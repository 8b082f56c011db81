/**
 * Earlier versions of a creation (decisions.md §15): whenever a regenerate, an edit by hand or a restore replaces a
 * creation's caption, alt text or image, the content replaced is kept as a version; the last MAX_VERSIONS stay.
 * "Restore" (the post page) makes a version the current content again, and the content it replaces is kept in turn.
 *
 * API for other modules and the dashboard:
 *  - `keepVersion(deps, row)`: inside a write, before `row`'s content is replaced
 *  - `listVersions(deps, accountId, creationId)` → CreationVersion[] (newest first; 404 for others' creations)
 *  - `restoreVersion(deps, accountId, creationId, versionId)` → Creation
 */
import { and, desc, eq, notInArray } from "drizzle-orm";
import type { CreationRow } from "../../db/schema";
import type { CreationVersionRow } from "../../db/schema/creation-versions";
import { creations, creationVersions } from "../../db/tables";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { registerAssetReferenceCheck } from "../assets/references";
import { assetUrl, findAsset, lockAsset } from "../assets/service";
import type { StoredImage, StoredPart, StoredVariants } from "../../db/schema/post-content";
import { assetIdsOf } from "../../publishing/content";
import type { Creation, CreationVersion } from "./model";
import { creationToApi, findCreationRow, serialized, viewOf } from "./service";

/** How many earlier versions a creation keeps. */
export const MAX_VERSIONS = 10;
/** The source of a caption or alt text written by hand (PATCH, the dashboard). */
export const HAND_SOURCE = "hand";

// A kept version does not stop its image from being deleted from the library: the person deleting it sees no
// version, and a restore of a version whose image is gone restores its text and keeps the current image.
registerAssetReferenceCheck("creation_versions", () => 0);

/**
 * Keeps `row`'s current content as a version, then drops the oldest beyond MAX_VERSIONS. Runs inside the caller's
 * write (its queries through `deps.store.db` join it), before the row is updated.
 */
export async function keepVersion(deps: Pick<Deps, "store" | "clock">, row: CreationRow): Promise<void> {
  const db = deps.store.db;
  await db
    .insert(creationVersions)
    .values({
      id: newId(),
      creationId: row.id,
      accountId: row.accountId,
      caption: row.caption,
      captionSource: row.captionSource,
      altText: row.altText,
      altTextSource: row.altTextSource,
      imageAssetId: row.imageAssetId,
      content: { images: row.images, thread: row.thread, firstComment: row.firstComment, variants: row.variants },
      replacedAt: deps.clock.now(),
    })
    .run();
  const newest = db
    .select({ id: creationVersions.id })
    .from(creationVersions)
    .where(eq(creationVersions.creationId, row.id))
    .orderBy(desc(creationVersions.id))
    .limit(MAX_VERSIONS);
  await db.delete(creationVersions).where(and(eq(creationVersions.creationId, row.id), notInArray(creationVersions.id, newest))).run();
}

async function versionToApi(deps: Deps, row: CreationVersionRow): Promise<CreationVersion> {
  const asset = row.imageAssetId ? await findAsset(deps, row.accountId, row.imageAssetId) : null;
  return {
    id: row.id,
    caption: row.caption,
    altText: row.imageAssetId ? (row.altText ?? "") : null,
    imageAssetId: row.imageAssetId,
    imageUrl: asset ? assetUrl(deps, asset) : null,
    editedByHand: { caption: row.captionSource === HAND_SOURCE, altText: row.altTextSource === HAND_SOURCE },
    replacedAt: isoAt(row.replacedAt),
  };
}

/** GET /creations/{id}/versions: the creation's earlier versions, newest first; 404 for a missing or others' id. */
export async function listVersions(deps: Deps, accountId: string, creationId: string): Promise<CreationVersion[]> {
  if (!(await findCreationRow(deps, accountId, creationId))) throw notFound("creation");
  const rows = await deps.store.db
    .select()
    .from(creationVersions)
    .where(and(eq(creationVersions.creationId, creationId), eq(creationVersions.accountId, accountId)))
    .orderBy(desc(creationVersions.id))
    .all();
  const out: CreationVersion[] = [];
  for (const row of rows) out.push(await versionToApi(deps, row));
  return out;
}

/**
 * What restoring `version` sets, inside the restore's write. Every image it names is locked (a delete of one at this
 * moment either waits and counts this creation or is done). A version kept with its whole content restores it, minus
 * the images deleted from the library since (left out where they stood; the first image and its alt text follow
 * what remains; when every image of the version is gone, the current images stay). An older version (caption, alt
 * text and image only, kept when a post had one image at most) restores that image as the first, or no image; when
 * its image is gone, the current images stay.
 */
async function restoredContent(deps: Deps, accountId: string, version: CreationVersionRow, current: CreationRow) {
  const content = version.content;
  if (content) {
    const present = new Set<string>();
    for (const id of assetIdsOf(content)) if (await lockAsset(deps, accountId, id)) present.add(id);
    const kept = (images: readonly StoredImage[]) => images.filter((i) => present.has(i.assetId));
    const keptParts = (parts: readonly StoredPart[]) => parts.map((p) => ({ ...p, images: kept(p.images) }));
    const variants: StoredVariants = {};
    for (const [platform, v] of Object.entries(content.variants)) {
      variants[platform] = { ...v, ...(v.images ? { images: kept(v.images) } : {}), ...(v.thread ? { thread: keptParts(v.thread) } : {}) };
    }
    const remaining = kept(content.images);
    // Every image of the version is gone: its text comes back, the current images stay (as with an older version).
    const images = content.images.length > 0 && remaining.length === 0 ? current.images : remaining;
    const first = images[0];
    const keepsCurrent = images === current.images;
    const firstAsKept = first?.assetId === version.imageAssetId;
    return {
      images,
      thread: keptParts(content.thread),
      firstComment: content.firstComment,
      variants,
      imageAssetId: first?.assetId ?? null,
      altText: first ? (first.altText ?? "") : null,
      altTextSource: !first ? null : keepsCurrent ? current.altTextSource : firstAsKept ? version.altTextSource : HAND_SOURCE,
    };
  }
  const image = version.imageAssetId ? await lockAsset(deps, accountId, version.imageAssetId) : null;
  if (version.imageAssetId === null) return { imageAssetId: null, altText: null, altTextSource: null, images: [] };
  if (!image) return {};
  const altText = version.altText ?? "";
  return {
    imageAssetId: image.id,
    altText,
    altTextSource: version.altTextSource,
    images: [{ assetId: image.id, altText: altText === "" ? null : altText }, ...current.images.slice(1)],
  };
}

/**
 * Makes version `versionId` the creation's current content (caption, alt text, image, and who wrote them); the
 * content it replaces is kept as a version. A version whose image was deleted from the library since restores its
 * text only (the current image and its alt text stay). Free. Runs in the creation's regenerate queue. 404 for a
 * missing or others' creation or version.
 */
export async function restoreVersion(deps: Deps, accountId: string, creationId: string, versionId: string): Promise<Creation> {
  if (!(await findCreationRow(deps, accountId, creationId)) || !isUuid(versionId)) throw notFound("creation version");
  return serialized(creationId, async () => {
    const saved = await deps.store.write(async (tx) => {
      const current = await findCreationRow(deps, accountId, creationId);
      if (!current) throw notFound("creation");
      const version = await tx
        .select()
        .from(creationVersions)
        .where(and(eq(creationVersions.id, versionId), eq(creationVersions.creationId, creationId), eq(creationVersions.accountId, accountId)))
        .get();
      if (!version) throw notFound("creation version");
      const changes = await restoredContent(deps, accountId, version, current);
      await keepVersion(deps, current);
      const row = await tx
        .update(creations)
        .set({ caption: version.caption, captionSource: version.captionSource, ...changes, updatedAt: deps.clock.now() })
        .where(and(eq(creations.id, creationId), eq(creations.accountId, accountId)))
        .returning()
        .get();
      if (!row) throw notFound("creation");
      return row;
    });
    return creationToApi(deps, await viewOf(deps, saved));
  });
}
