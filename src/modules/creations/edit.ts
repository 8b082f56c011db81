/**
 * Hand edits of a creation (decisions.md §10): PATCH changes the caption and/or the alt text, free; DELETE removes the
 * creation unless a pending post still uses it (409 creation_in_use). A scheduled post keeps its own snapshot either
 * way: nothing here touches scheduled_posts.
 *
 * API for other modules and the dashboard:
 *  - `editCreation(deps, accountId, id, input: {caption?, altText?})` → Promise<Creation>
 *  - `deleteCreation(deps, accountId, id)` → Promise<{id, deleted: true}>
 */
import { and, eq, inArray } from "drizzle-orm";
import { creations, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { StoreDb } from "../../db/store";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { findAsset } from "../assets/service";
import { MAX_ALT_TEXT_GRAPHEMES, MAX_HAND_CAPTION_GRAPHEMES, type Creation } from "./model";
import { creationToApi, findCreationRow, graphemeCount, serialized } from "./service";
import { HAND_SOURCE, keepVersion } from "./versions";

export interface CreationEdit {
  caption?: string;
  altText?: string;
}

/**
 * A caption written by hand as it will be stored: trimmed, non-empty, at most MAX_HAND_CAPTION_GRAPHEMES
 * (decisions.md §13; each network's own limit is checked at scheduling). `field` names it in the refusal.
 */
export function cleanHandCaption(caption: string, field = "caption"): string {
  const trimmed = caption.trim();
  if (trimmed === "") throw invalidField(field, "must not be empty");
  const length = graphemeCount(trimmed);
  if (length > MAX_HAND_CAPTION_GRAPHEMES) throw invalidField(field, `must be at most ${MAX_HAND_CAPTION_GRAPHEMES} characters (this one has ${length})`);
  return trimmed;
}

/** Alt text written by hand as it will be stored: trimmed, at most MAX_ALT_TEXT_GRAPHEMES. */
export function cleanAltText(altText: string, field = "altText"): string {
  const trimmed = altText.trim();
  const length = graphemeCount(trimmed);
  if (length > MAX_ALT_TEXT_GRAPHEMES) {
    throw invalidField(field, `must be at most ${MAX_ALT_TEXT_GRAPHEMES} characters (this one has ${length})`);
  }
  return trimmed;
}

/**
 * PATCH /creations/{id}: sets the caption and/or the alt text by hand, marks them written by hand and keeps the content
 * they replace as a version (versions.ts). Free, nothing else changes (the image, the
 * variant regenerate counts from, and every scheduled post's snapshot stay as they are). Runs in the creation's
 * regenerate queue, so an edit never interleaves with a regenerate of the same creation.
 */
export async function editCreation(deps: Deps, accountId: string, id: string, input: CreationEdit): Promise<Creation> {
  if (input.caption === undefined && input.altText === undefined) {
    throw new AppError("invalid_request", "Send caption, altText or both.", {
      details: [{ field: "body", problem: "must contain caption or altText" }],
    });
  }
  const caption = input.caption === undefined ? undefined : cleanHandCaption(input.caption);
  const altText = input.altText === undefined ? undefined : cleanAltText(input.altText);
  if (!(await findCreationRow(deps, accountId, id))) throw notFound("creation");
  return serialized(id, async () => {
    const current = await findCreationRow(deps, accountId, id);
    if (!current) throw notFound("creation");
    const asset = current.imageAssetId ? await findAsset(deps, accountId, current.imageAssetId) : null;
    if (altText !== undefined && !asset) throw invalidField("altText", "cannot be set: the creation has no image");
    const captionChanges = caption !== undefined && caption !== current.caption;
    const altTextChanges = altText !== undefined && altText !== (current.altText ?? "");
    // Saving the same text again changes nothing: no version, and who wrote it stays as it was.
    if (!captionChanges && !altTextChanges) return creationToApi(deps, { row: current, asset });
    const changes = {
      ...(captionChanges ? { caption, captionSource: HAND_SOURCE } : {}),
      ...(altTextChanges ? { altText, altTextSource: HAND_SOURCE } : {}),
      updatedAt: deps.clock.now(),
    };
    const row = await deps.store.write(async (tx) => {
      await keepVersion(deps, current);
      return tx
        .update(creations)
        .set(changes)
        .where(and(eq(creations.id, id), eq(creations.accountId, accountId)))
        .returning()
        .get();
    });
    if (!row) throw notFound("creation"); // deleted meanwhile
    return creationToApi(deps, { row, asset });
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
