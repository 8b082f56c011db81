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
import type { Creation, CreationVersion } from "./model";
import { creationToApi, findCreationRow, serialized } from "./service";

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
      // Locked for the write, so a delete of the image at this moment either waits and counts this creation or is done.
      const image = version.imageAssetId ? await lockAsset(deps, accountId, version.imageAssetId) : null;
      const imageChanges =
        version.imageAssetId === null
          ? { imageAssetId: null, altText: null, altTextSource: null }
          : image
            ? { imageAssetId: image.id, altText: version.altText ?? "", altTextSource: version.altTextSource }
            : {};
      await keepVersion(deps, current);
      const row = await tx
        .update(creations)
        .set({ caption: version.caption, captionSource: version.captionSource, ...imageChanges, updatedAt: deps.clock.now() })
        .where(and(eq(creations.id, creationId), eq(creations.accountId, accountId)))
        .returning()
        .get();
      if (!row) throw notFound("creation");
      return row;
    });
    const asset = saved.imageAssetId ? await findAsset(deps, accountId, saved.imageAssetId) : null;
    return creationToApi(deps, { row: saved, asset });
  });
}
